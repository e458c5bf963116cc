// Package browsertest opens calibra's HTML pages in headless Chromium for
// tests: it reports console errors, dialogs (a script that ran), and how
// much of each chart's canvas was drawn. Only tests import it.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/testenv"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Result is what the page did.
type Result struct {
	Errors     []string             // console errors and uncaught exceptions
	Dialogs    []string             // alert/confirm/prompt messages: scripts that ran
	Charts     map[string]float64   // chart id -> share of its canvas drawn (non-white)
	Unrendered []string             // chart elements with no canvas
	RenderMs   float64              // navigation to the last chart drawn
	Text       string               // the page's visible text
	YMax       map[string][]float64 // chart id -> the top of each y axis as drawn
	PageWidth  float64              // the page's scroll width: wider than the window scrolls sideways
	PageHeight float64              // the page's scroll height
	Screenshot []byte               // PNG of the whole page, taken only with CALIBRA_TEST_SCREENSHOTS
}

// Require skips the test under -short (the unit tests need nothing
// installed) and when Chromium is missing, unless CALIBRA_TEST_REQUIRE
// names chromium, which turns the skip into a failure.
func Require(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("opens report.html in headless Chromium; run without -short")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testenv.Required("chromium") {
		t.Fatal("Chromium is required here (CALIBRA_TEST_REQUIRE names chromium) but is not installed: apt-get install chromium")
	}
	t.Skip("no Chromium installed, so the HTML report is not opened in a browser (apt-get install chromium)")
	return ""
}

// Browser is one headless Chromium shared by a test's pages.
type Browser struct {
	ctx           context.Context
	width, height int64
}

// New starts Chromium (or skips, see Require); it stops when the test ends.
func New(t *testing.T) *Browser {
	t.Helper()
	b, stop, err := start(Require(t))
	t.Cleanup(stop)
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// windowWidth and windowHeight are the window's and the pages' viewport in
// pixels (Sized shows a page in another).
const windowWidth, windowHeight = 1280, 900

// start starts Chromium and returns what closes it.
func start(bin string) (*Browser, func(), error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(windowWidth, windowHeight), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, _ := chromedp.NewContext(actx)
	// Closed, not killed, and waited for: a killed Chromium leaves its
	// singleton socket's directory in /tmp (824 of them here).
	stop := func() { _ = chromedp.Cancel(ctx); cancelAlloc() }
	return &Browser{ctx: ctx, width: windowWidth, height: windowHeight}, stop, chromedp.Run(ctx)
}

// shared is the one Chromium of a test binary whose tests each open their
// pages in tabs of their own (Shared): a start costs about as much CPU as
// a page.
var shared struct {
	sync.Mutex
	b    *Browser
	stop func()
}

// Shared is New's Chromium, started by the first test that asks and kept
// for the others; the package's TestMain calls Close after its tests.
func Shared(t *testing.T) *Browser {
	t.Helper()
	bin := Require(t)
	shared.Lock()
	defer shared.Unlock()
	if shared.b == nil {
		b, stop, err := start(bin)
		if err != nil {
			stop()
			t.Fatalf("start chromium: %v", err)
		}
		shared.b, shared.stop = b, stop
	}
	return shared.b
}

// Close closes the Chromium Shared started, if it did.
func Close() {
	shared.Lock()
	defer shared.Unlock()
	if shared.stop != nil {
		shared.stop()
		shared.b, shared.stop = nil, nil
	}
}

// Sized is b's Chromium showing its pages in a viewport of width x height
// pixels: 400 wide is a phone.
func (b *Browser) Sized(width, height int) *Browser {
	c := *b
	c.width, c.height = int64(width), int64(height)
	return &c
}

// Context is the browser's: chromedp.NewContext(b.Context()) is a new tab
// for a test that drives a page itself.
func (b *Browser) Context() context.Context { return b.ctx }

// Open loads file in a new tab and waits for its charts. With
// CALIBRA_TEST_SCREENSHOTS=DIR it keeps a screenshot there, named after
// the test.
func (b *Browser) Open(t *testing.T, file string) Result {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	var res Result
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			res.Errors = append(res.Errors, exception(e.ExceptionDetails))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				res.Errors = append(res.Errors, "console: "+strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				res.Errors = append(res.Errors, "log: "+e.Entry.Text)
			}
		case *page.EventJavascriptDialogOpening:
			res.Dialogs = append(res.Dialogs, e.Message)
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	var charts []struct {
		ID    string  `json:"id"`
		Drawn float64 `json:"drawn"`
	}
	var renderMs string
	// A full-page PNG is most of a page's CPU: taken only to be kept.
	shotDir := os.Getenv("CALIBRA_TEST_SCREENSHOTS")
	var shoot chromedp.Action = chromedp.ActionFunc(func(context.Context) error { return nil })
	if shotDir != "" {
		shoot = chromedp.FullScreenshot(&res.Screenshot, 100) // 100: PNG
	}
	err = chromedp.Run(ctx,
		log.Enable(), runtime.Enable(),
		// The window has a floor (500 px in headless Chromium); the
		// viewport does not.
		chromedp.EmulateViewport(b.width, b.height),
		chromedp.Navigate("file://"+abs),
		chromedp.WaitReady("body"),
		chromedp.Poll(`document.documentElement.hasAttribute('data-charts')`, nil),
		chromedp.Evaluate(`document.documentElement.getAttribute('data-render-ms') || ''`, &renderMs),
		chromedp.Evaluate(drawnJS, &charts),
		chromedp.Evaluate(`document.body.innerText`, &res.Text),
		chromedp.Evaluate(yMaxJS, &res.YMax),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &res.PageWidth),
		chromedp.Evaluate(`document.documentElement.scrollHeight`, &res.PageHeight),
		shoot,
	)
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	fmt.Sscan(renderMs, &res.RenderMs)
	if dir := shotDir; dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png"), res.Screenshot, 0o644) // safefs: a test aid, into the directory its developer names
	}
	res.Charts = map[string]float64{}
	for _, c := range charts {
		if c.Drawn < 0 {
			res.Unrendered = append(res.Unrendered, c.ID)
			continue
		}
		res.Charts[c.ID] = c.Drawn
	}
	return res
}

// yMaxJS reads the top of every y axis of every chart, as ECharts drew it.
const yMaxJS = `(function () {
  var out = {};
  document.querySelectorAll('.chart').forEach(function (el) {
    var c = echarts.getInstanceByDom(el);
    if (!c) return;
    var tops = [];
    for (var i = 0; ; i++) {
      var a = c.getModel().getComponent('yAxis', i);
      if (!a || !a.axis || !a.axis.scale) break;
      tops.push(a.axis.scale.getExtent()[1]);
    }
    out[el.id] = tops;
  });
  return out;
})()`

func exception(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// drawnJS measures, for each chart, the share of canvas pixels that are
// not background: a chart with axes but no data draws a few percent.
const drawnJS = `Array.from(document.querySelectorAll('.chart')).map(function (el) {
  var c = el.querySelector('canvas');
  if (!c || !c.width || !c.height) return {id: el.id, drawn: -1};
  var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;
  for (var i = 0; i < d.length; i += 4) if (d[i+3] > 0 && (d[i] < 240 || d[i+1] < 240 || d[i+2] < 240)) n++;
  return {id: el.id, drawn: n / (d.length / 4)};
})`
