// calibra serve's live page: asks serve once a second for the run's new
// seconds (/api/live?run=ID&after=SEQ) and shows the newest as counters,
// every one as a chart. Text goes in as textContent only: no figure or
// phase is parsed as HTML.
(function () {
  'use strict';
  var root = document.getElementById('live');
  if (!root) return;
  var api = root.getAttribute('data-api'), run = root.getAttribute('data-run');
  var after = 0, tpm = [], nopm = [], art = [], p90 = [];
  var chart = typeof echarts === 'undefined' ? null : echarts.init(document.getElementById('live-chart'), null, {renderer: 'canvas'});

  function text(id, v) { var el = document.getElementById(id); if (el) el.textContent = v; }
  function num(v, digits) { return typeof v === 'number' ? v.toFixed(digits) : '-'; }

  function draw() {
    if (!chart) return;
    chart.setOption({
      animation: false,
      tooltip: {trigger: 'axis', renderMode: 'richText'},
      legend: {top: 0},
      grid: {left: 70, right: 70, top: 40, bottom: 40},
      xAxis: {type: 'time'},
      yAxis: [{type: 'value', name: 'a minute', scale: true}, {type: 'value', name: 'ms', scale: true, splitLine: {show: false}}],
      series: [
        {name: 'transactions a minute', type: 'line', showSymbol: false, data: tpm},
        {name: 'New-Orders a minute', type: 'line', showSymbol: false, data: nopm},
        {name: 'mean response (ms)', type: 'line', showSymbol: false, yAxisIndex: 1, data: art},
        {name: 'p90 response (ms)', type: 'line', showSymbol: false, yAxisIndex: 1, data: p90}]
    });
  }

  function show(d) {
    d.seconds.forEach(function (s) {
      var f = s.figures, t = Date.parse(s.at);
      after = Math.max(after, s.seq);
      tpm.push([t, f.oltp_tpm_client]); nopm.push([t, f.oltp_nopm_client]);
      art.push([t, f.oltp_art_ms]); p90.push([t, f.oltp_p90_ms]);
      text('tpm', num(f.oltp_tpm_client, 0)); text('nopm', num(f.oltp_nopm_client, 0));
      text('art', num(f.oltp_art_ms, 2)); text('p90', num(f.oltp_p90_ms, 2));
      text('users', num(f.oltp_users, 0)); text('errors', num(f.oltp_errors, 0));
      text('oltp-phase', typeof f.oltp_phase === 'string' ? f.oltp_phase : '-');
    });
    text('phase', d.phase);
    if (d.status === 'running') text('state', 'running: last heard ' + d.heard_ago_s + ' s ago');
    else if (d.status === 'stopped') text('state', 'stopped without a finish: last heard ' + d.heard + ' UTC');
    else text('state', 'finished: ' + d.status + ' (its report has every figure)');
    root.setAttribute('data-status', d.status);
    root.setAttribute('data-seconds', String(after));
    if (d.seconds.length) draw();
  }

  function poll() {
    fetch(api + '?run=' + encodeURIComponent(run) + '&after=' + after, {credentials: 'omit', cache: 'no-store'})
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (d) { show(d); if (d.status === 'running') setTimeout(poll, 1000); })
      .catch(function () { text('state', 'calibra serve does not answer: is it still running?'); setTimeout(poll, 5000); });
  }
  draw();
  poll();
})();
