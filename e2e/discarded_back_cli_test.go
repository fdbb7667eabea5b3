package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/dlqt/dlqt/internal/broker/brokertest"
)

// A message the journal says was discarded that is in the queue again (its
// ack was never applied before a broker restart; here: published again)
// carries the journal entry in `messages --json`, and stderr names it.
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
		} `json:"discarded"`
	}
	marked := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var m row
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.Discarded != nil {
			marked[m.ID] = m.Discarded.Entry
		}
	}
	if len(marked) != 1 || marked["m-2"] != outcome.Seq {
		t.Errorf("marked %v, want m-2 -> entry %d", marked, outcome.Seq)
	}
	if !strings.Contains(r.stderr, "m-2 (#") {
		t.Errorf("stderr does not name it: %s", r.stderr)
	}
}
