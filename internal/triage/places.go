package triage

// MergePlaces merges b into a, both places sorted by cmp, into one sorted
// slice: what a read's index and what it adds to it later are merged by
// (a selecting replay's ledger and its hold's ids, which grow as they read).
func MergePlaces(a, b []int32, cmp func(x, y int32) int) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if cmp(a[i], b[j]) <= 0 {
			out, i = append(out, a[i]), i+1
		} else {
			out, j = append(out, b[j]), j+1
		}
	}
	return append(append(out, a[i:]...), b[j:]...)
}
