package cli

import "testing"

// The offer to discard again is a command to paste: a queue name the
// shell would split or expand is quoted, and nothing from the broker
// reaches the terminal raw.
func TestRetryCommandIsOneShellWordPerArgument(t *testing.T) {
	for queue, want := range map[string]string{
		"orders.parking":    "dlqt discard orders.parking --retry 7 --yes",
		"orders parking":    "dlqt discard 'orders parking' --retry 7 --yes",
		"it's $HOME":        `dlqt discard 'it'\''s $HOME' --retry 7 --yes`,
		"q\x1b[2J":          `dlqt discard 'q\x1b[2J' --retry 7 --yes`,
		"billing/eu:errors": "dlqt discard billing/eu:errors --retry 7 --yes",
	} {
		if got := retryCommand(queue, 7); got != want {
			t.Errorf("%q: %s, want %s", queue, got, want)
		}
	}
}
