package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A message the journal says was discarded that is in the queue again (its
// ack was never applied before a broker restart; here: published again)
// carries the journal entry in `messages --json`, and stderr names it and
// offers to discard it again: `discard --retry SEQ` takes it with the
// reason of that entry, journaled as a retry of it (issue 23 item 8).
func TestMessagesMarkADiscardedMessageThatIsBack(t *testing.T) {
	cfg := brokertest.NewVhost(t, "discarded-back")
	conn := brokertest.Dial(t, cfg)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders.parking", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	publish := func(id string) {
		t.Helper()
		err := ch.PublishWithContext(context.Background(), "", "orders.parking", false, false,
			amqp.Publishing{MessageId: id, ContentType: "application/json", Body: []byte(`{"n":1}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		publish(id)
	}
	waitReady(t, cfg, "orders.parking", 3)
	jpath := filepath.Join(t.TempDir(), "journal.db")
	env := append(brokerEnv(t, cfg), "DLQT_JOURNAL="+jpath)

	r := runDlqt(t, env, "discard", "orders.parking", "--id", "m-2", "--reason", "duplicate", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "discarded (verified)") {
		t.Fatalf("discard: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	es := journalEntries(t, jpath)
	outcome := es[len(es)-1]
	if outcome.Details["step"] != "outcome" || outcome.Details["verified"] != true {
		t.Fatalf("outcome %+v", outcome)
	}
	publish("m-2")
	waitReady(t, cfg, "orders.parking", 3)

	r = runDlqt(t, env, "messages", "orders.parking", "--json")
	if r.code != 0 {
		t.Fatalf("messages: exit %d: %s", r.code, r.stderr)
	}
	type row struct {
		ID        string `json:"id"`
		Discarded *struct {
			Entry uint64 `json:"entry"`
			Note  string `json:"note"`
			Retry string `json:"retry"`
		} `json:"discarded"`
	}
	marked := map[string]uint64{}
	retry := ""
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var m row
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Discarded != nil {
			marked[m.ID] = m.Discarded.Entry
			retry = m.Discarded.Retry
		}
	}
	if len(marked) != 1 || marked["m-2"] != outcome.Seq {
		t.Errorf("marked %v, want m-2 -> entry %d", marked, outcome.Seq)
	}
	if !strings.Contains(r.stderr, "m-2 (#") {
		t.Errorf("stderr does not name it: %s", r.stderr)
	}
	want := fmt.Sprintf("dlqt discard orders.parking --retry %d --yes", outcome.Seq)
	if retry != want || !strings.Contains(r.stderr, want) {
		t.Fatalf("the offer to discard it again is %q, want %q (stderr: %s)", retry, want, r.stderr)
	}

	r = runDlqt(t, env, strings.Fields(want)[1:]...)
	if r.code != 0 || !strings.Contains(r.stdout, "discarded 1 message(s)") || !strings.Contains(r.stdout, "m-2") {
		t.Fatalf("%s: exit %d: %s%s", want, r.code, r.stdout, r.stderr)
	}
	for _, e := range journalEntries(t, jpath)[len(es):] {
		if e.Reason != "duplicate" || e.Details["retry_of"] != float64(outcome.Seq) {
			t.Errorf("entry %d of the retry: reason %q, retry_of %v; want the reason and seq of #%d", e.Seq, e.Reason, e.Details["retry_of"], outcome.Seq)
		}
	}
	waitReady(t, cfg, "orders.parking", 2)
	r = runDlqt(t, env, "messages", "orders.parking", "--json")
	if r.code != 0 || strings.Contains(r.stdout, `"m-2"`) || !strings.Contains(r.stdout, `"m-1"`) || !strings.Contains(r.stdout, `"m-3"`) {
		t.Errorf("after the retry: exit %d: %s", r.code, r.stdout)
	}
}
