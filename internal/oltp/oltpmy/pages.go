package oltpmy

import (
	"context"
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// CheckPages runs CHECK TABLE ... EXTENDED on every table of the
// workload: InnoDB reads each page, verifying its checksum, and each
// index against its table. A table it finds damaged is one finding (at
// least one page; CHECK TABLE names no block).
func (c *control) CheckPages(ctx context.Context) (oltp.PageCheck, error) {
	check := oltp.PageCheck{Method: "CHECK TABLE ... EXTENDED, InnoDB page checksums"}
	for _, t := range tables {
		rows, err := c.conn.QueryContext(ctx, "CHECK TABLE "+t+" EXTENDED")
		if err != nil {
			check.Damaged = append(check.Damaged, fmt.Sprintf("table %s: %v", t, err))
			continue
		}
		var said []string
		for rows.Next() {
			var table, op, typ, text string
			if err := rows.Scan(&table, &op, &typ, &text); err != nil {
				rows.Close()
				return check, err
			}
			if !(strings.EqualFold(typ, "status") && strings.EqualFold(text, "OK") || strings.EqualFold(typ, "note")) {
				said = append(said, typ+": "+text)
			}
		}
		if err := rows.Err(); err != nil {
			said = append(said, err.Error())
		}
		rows.Close()
		if len(said) > 0 {
			check.Damaged = append(check.Damaged, fmt.Sprintf("table %s: %s", t, strings.Join(said, "; ")))
		}
	}
	return check, ctx.Err()
}
