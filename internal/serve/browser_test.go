package serve

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
)

// In headless Chromium (one for the whole test): the list loads with the
// hostile label as text, a label filter narrows it, two runs ticked open
// their compare with its charts drawn, the trend of oltp.nopm draws a
// symbol at each of its five runs, and a run's report draws its charts;
// no page's policy refuses anything of its own (a console error).
func TestInChromium(t *testing.T) {
	t.Parallel() // a Chromium of its own
	browser := browsertest.New(t)
	f := newFixture(t)
	ctx, cancel := chromedp.NewContext(browser.Context()) // a tab
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	var dialogs, errs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, e.ExceptionDetails.Text)
		case *log.EventEntryAdded: // a Content-Security-Policy refusal among them
			if e.Entry.Level == log.LevelError {
				errs = append(errs, e.Entry.Text)
			}
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, e.Message)
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// navigate runs actions that leave the page (a form sent), and waits
	// for the next one to load.
	navigate := func(what string, actions ...chromedp.Action) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, actions...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if resp.Status != 200 {
			t.Fatalf("%s: %d %s", what, resp.Status, resp.URL)
		}
	}
	const rows = `document.querySelectorAll('table.runs tbody tr').length`
	var n int
	var text string
	run("load the list", log.Enable(), chromedp.Navigate(f.srv.URL+base+"/"),
		chromedp.Evaluate(rows, &n), chromedp.Evaluate(`document.body.innerText`, &text))
	if n != len(fixtureNames) {
		t.Errorf("the list shows %d runs, want %d", n, len(fixtureNames))
	}
	if !strings.Contains(text, "<script>alert(1)</script>") {
		t.Errorf("the hostile label is not shown as text")
	}

	navigate("filter by label", chromedp.SetValue(`#filter input[name=label]`, "repeats-*", chromedp.ByQuery), chromedp.Submit(`#filter`, chromedp.ByQuery))
	run("count the runs", chromedp.Evaluate(rows, &n))
	if n != 2 {
		t.Errorf("the label repeats-* leaves %d runs, want 2", n)
	}

	var title string
	var charts int
	navigate("select two runs and compare", chromedp.Click(`table.runs tbody tr:nth-child(1) input[type=checkbox]`, chromedp.ByQuery),
		chromedp.Click(`table.runs tbody tr:nth-child(2) input[type=checkbox]`, chromedp.ByQuery),
		chromedp.Click(`#select button[type=submit]`, chromedp.ByQuery))
	run("read the compare", chromedp.Poll(`document.documentElement.hasAttribute('data-charts')`, nil),
		chromedp.Evaluate(`document.querySelector('h1').textContent`, &title),
		chromedp.Evaluate(`Number(document.documentElement.getAttribute('data-charts'))`, &charts),
		chromedp.Evaluate(`document.body.innerText`, &text))
	if title != "calibra compare" || !strings.Contains(text, "repeats-a") || !strings.Contains(text, "repeats-b") {
		t.Errorf("the compare page (%q) does not set repeats-a and repeats-b side by side:\n%.400s", title, text)
	}
	if charts == 0 {
		t.Errorf("the compare page drew no chart")
	}

	var drawn []bool
	run("draw the trend", chromedp.Navigate(f.srv.URL+base+"/trend?metric=oltp.nopm&per=run"),
		chromedp.Poll(`document.documentElement.hasAttribute('data-points')`, nil), chromedp.Evaluate(pointsDrawnJS, &drawn))
	if len(drawn) != 5 {
		t.Errorf("the trend has %d points, want 5 (the runs that measured oltp.nopm)", len(drawn))
	}
	for i, ok := range drawn {
		if !ok {
			t.Errorf("point %d of the trend is not drawn", i)
		}
	}
	run("draw a run's report", chromedp.Navigate(f.srv.URL+base+"/runs/"+url.PathEscape(f.ids["oltp-base"])+"/"),
		chromedp.Poll(`document.documentElement.hasAttribute('data-charts')`, nil),
		chromedp.Evaluate(`Number(document.documentElement.getAttribute('data-charts'))`, &charts),
		chromedp.Evaluate(`document.querySelectorAll('.chart canvas').length`, &n))
	if charts == 0 || n != charts {
		t.Errorf("the run's report drew %d of its %d charts", n, charts)
	}
	if len(dialogs) > 0 || len(errs) > 0 {
		t.Errorf("a script ran from the data (dialogs %q) or failed (%q)", dialogs, errs)
	}
}

// pointsDrawnJS says, for each point of the trend's lines, whether the
// canvas is painted where ECharts places it.
const pointsDrawnJS = `(function () {
  var el = document.getElementById('trend'), chart = echarts.getInstanceByDom(el);
  var canvas = el.querySelector('canvas'), g = canvas.getContext('2d'), scale = canvas.width / canvas.clientWidth;
  var out = [];
  chart.getOption().series.forEach(function (s, i) {
    if (s.type !== 'line') return;
    s.data.forEach(function (d) {
      var p = chart.convertToPixel({seriesIndex: i}, d);
      var px = g.getImageData(Math.round(p[0] * scale), Math.round(p[1] * scale), 1, 1).data;
      out.push(px[3] > 0 && (px[0] < 240 || px[1] < 240 || px[2] < 240));
    });
  });
  return out;
})()`

// In Chromium: the dashboard draws a card a target with its small trend
// and links to the runs; the live page of a run writing its seconds to
// the store shows its counter move as they come, under serve's policy
// (a refused request is a console error); the trend a day at a time
// draws its points with a zoom slider.
func TestLiveInChromium(t *testing.T) {
	t.Parallel() // a Chromium of its own
	browser := browsertest.New(t)
	f := newFixture(t)
	ctx, cancel := chromedp.NewContext(browser.Context())
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	var errs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				errs = append(errs, e.Entry.Text)
			}
		}
	})
	var cards, sparks int
	if err := chromedp.Run(ctx, log.Enable(), chromedp.Navigate(f.srv.URL+base+"/dashboard"),
		chromedp.Evaluate(`document.querySelectorAll('.card').length`, &cards),
		chromedp.Evaluate(`document.querySelectorAll('.card svg.spark polyline').length`, &sparks)); err != nil {
		t.Fatal(err)
	}
	if cards < 3 || sparks == 0 {
		t.Errorf("the dashboard shows %d targets and %d small trends", cards, sparks)
	}

	dir := copyFixture(t, "oltp-base", func(r *results.Run) {
		r.Meta.Label, r.StartedAt, r.Steps, r.Status, r.FinishedAt = "live-b", time.Now().UTC(), nil, "", nil
	})
	l, err := f.store.Follow(context.Background(), dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.End(context.Background(), true)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		cols := []string{"oltp_phase", "oltp_tpm_client", "oltp_nopm_client", "oltp_art_ms", "oltp_p90_ms", "oltp_errors", "oltp_users"}
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			l.Second(time.Now(), cols, []string{"measure", strconv.Itoa(1000 + i), "450.0", "2.5", "4.0", "0", "8"})
		}
	}()
	var seen []string
	if err := chromedp.Run(ctx, chromedp.Navigate(f.srv.URL+base+"/live?run="+url.QueryEscape(l.ID))); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(seen) < 3 && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var tpm string
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById('tpm').textContent`, &tpm)); err != nil {
			t.Fatal(err)
		}
		if tpm != "-" && (len(seen) == 0 || seen[len(seen)-1] != tpm) {
			seen = append(seen, tpm)
		}
	}
	if len(seen) < 3 {
		t.Errorf("the live counter showed %q: want it to move as the seconds come", seen)
	}
	var zooms int
	if err := chromedp.Run(ctx, chromedp.Navigate(f.srv.URL+base+"/trend?metric=oltp.nopm"),
		chromedp.Poll(`document.documentElement.hasAttribute('data-points')`, nil),
		chromedp.Evaluate(`echarts.getInstanceByDom(document.getElementById('trend')).getOption().dataZoom.length`, &zooms)); err != nil {
		t.Fatal(err)
	}
	if zooms != 2 {
		t.Errorf("the trend has %d zooms, want the slider and the wheel", zooms)
	}
	if len(errs) > 0 {
		t.Errorf("a script failed or the policy refused a request: %q", errs)
	}
}
