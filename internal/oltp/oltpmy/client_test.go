package oltpmy

import (
	"slices"
	"testing"
)

func TestQuestionMarks(t *testing.T) {
	for _, c := range []struct {
		in, want string
		args     []int
	}{
		{"SELECT 1", "SELECT 1", nil},
		{"WHERE a = $1 AND b = $2", "WHERE a = ? AND b = ?", []int{0, 1}},
		{"SET q = q - $1 WHERE id = $3 AND x >= $1 + $12", "SET q = q - ? WHERE id = ? AND x >= ? + ?", []int{0, 2, 0, 11}},
	} {
		got, args := questionMarks(c.in)
		if got != c.want || !slices.Equal(args, c.args) {
			t.Errorf("questionMarks(%q) = %q, %v; want %q, %v", c.in, got, args, c.want, c.args)
		}
	}
}
