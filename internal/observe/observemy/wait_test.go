package observemy

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/observe"
)

func TestWaitKey(t *testing.T) {
	for name, want := range map[string]observe.WaitKey{
		"wait/io/file/innodb/innodb_data_file":      {Class: "io/file", Event: "innodb/innodb_data_file"},
		"wait/synch/cond/sql/Item_func_sleep::cond": {Class: "synch/cond", Event: "sql/Item_func_sleep::cond"},
		"wait/lock/table/sql/handler":               {Class: "lock/table", Event: "sql/handler"},
		"idle":                                      {Class: "other", Event: "idle"},
	} {
		if got := waitKey(name); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}
