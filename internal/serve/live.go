package serve

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// MaxLiveSeconds is the most seconds one answer of the live page's data
// carries: the newest, then those after them as they come.
const MaxLiveSeconds = 3600

// liveData is a run as its live page follows it: its status ("running",
// "stopped" when its heartbeat stopped, or how it ended), what it does,
// when it was last heard from, and its load's seconds after the asked one.
type liveData struct {
	ID        string             `json:"id"`
	Label     string             `json:"label"`
	Target    string             `json:"target"`
	Started   string             `json:"started"`
	Status    string             `json:"status"`
	Phase     string             `json:"phase"`
	Heard     string             `json:"heard,omitempty"`
	HeardAgoS float64            `json:"heard_ago_s"`
	ReportURL string             `json:"report_url"`
	Seconds   []store.LiveSecond `json:"seconds"`
}

type livePage struct {
	frame
	liveData
	APIURL, JSONURL, CSVURL string
}

// liveView follows run=ID while it runs: the page draws its figures a
// second at a time from its data (/api/live?run=ID&after=SEQ), as the
// run writes them to the store; after=SEQ gives only the newer seconds.
func (s *Server) liveView(r *http.Request) (view, error) {
	v := r.URL.Query()
	id := v.Get("run")
	after, err := strconv.Atoi(cmp.Or(v.Get("after"), "0"))
	if err != nil || after < 0 {
		return view{}, badRequest("after " + strconv.Quote(v.Get("after")) + " is not a second's number")
	}
	ctx := r.Context()
	rows, err := s.store.History(ctx, store.Query{IDs: []string{id}})
	if err != nil {
		return view{}, err
	}
	if len(rows) == 0 {
		return view{}, notFound("the store holds no run %s", id)
	}
	states, err := s.store.LiveStates(ctx)
	if err != nil {
		return view{}, err
	}
	row, st := s.listRows(rows, states)[0], states[id]
	d := liveData{ID: id, Label: row.Label, Target: store.TrendPoint{Host: rows[0].Host, Storage: rows[0].Storage, Device: rows[0].Device, Engine: rows[0].Engine}.Target(),
		Started: row.Started, Status: row.Status, Phase: st.Phase, ReportURL: s.runURL(id), Seconds: []store.LiveSecond{}}
	if !st.Heartbeat.IsZero() {
		d.Heard, d.HeardAgoS = st.Heartbeat.UTC().Format(time.DateTime), s.now().Sub(st.Heartbeat).Round(time.Second).Seconds()
	}
	if rows[0].Status == results.StatusRunning {
		if d.Seconds, err = s.store.LiveSeconds(ctx, id, after, MaxLiveSeconds); err != nil {
			return view{}, err
		}
	}
	p := livePage{frame: s.frame("Live: " + row.Label), liveData: d, APIURL: s.base + "/api/live", JSONURL: s.apiURL("live", r), CSVURL: s.apiURL("live.csv", r)}
	return view{name: "live", page: p, data: d, table: liveTable(d.Seconds)}, nil
}

// liveTable is the seconds as CSV: their number, time and every figure.
func liveTable(secs []store.LiveSecond) [][]string {
	var cols []string
	for _, sec := range secs {
		for c := range sec.Figures {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	slices.Sort(cols)
	table := [][]string{append([]string{"seq", "time"}, cols...)}
	for _, sec := range secs {
		row := []string{strconv.Itoa(sec.Seq), sec.At.UTC().Format(time.RFC3339Nano)}
		for _, c := range cols {
			cell := ""
			if v, ok := sec.Figures[c]; ok {
				cell = fmt.Sprint(v)
			}
			row = append(row, cell)
		}
		table = append(table, row)
	}
	return table
}
