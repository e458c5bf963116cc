// calibra's chart renderer: turns the chart specs that the Go side inlines
// (script#calibra-data) into ECharts options. Text goes to canvas only
// (tooltips in richText mode), so no value is ever parsed as HTML.
(function () {
  'use strict';
  var palette = ['#2f5d8a', '#c0504d', '#6a9f3d', '#8064a2', '#d98b2b', '#4aacc6', '#7f7f7f'];

  function zip(xs, ys) {
    var out = new Array(ys.length);
    for (var i = 0; i < ys.length; i++) out[i] = [xs ? xs[i] : i, ys[i]];
    return out;
  }

  function axis(type, name, extra) {
    var a = {type: type || 'value', name: name || '', nameLocation: 'middle', nameGap: 30,
      scale: false, splitLine: {lineStyle: {color: '#eee'}}};
    for (var k in extra) a[k] = extra[k];
    return a;
  }

  function markLines(marks, vertical) {
    return (marks || []).map(function (m) {
      var d = {name: m.label, label: {formatter: m.label, position: vertical ? 'end' : 'insideStartTop'},
        lineStyle: {type: 'dashed', color: m.color || '#b22'}};
      d[vertical ? 'xAxis' : 'yAxis'] = m.value;
      return d;
    });
  }

  function timeline(spec) {
    var rows = spec.rows || [];
    return {
      tooltip: {renderMode: 'richText', formatter: function (p) {
        return p.value[3] + ': ' + (p.value[2] - p.value[1]).toFixed(2) + ' s';
      }},
      grid: {left: 70, right: 20, top: 40, bottom: 50},
      xAxis: axis('value', spec.x_name, {min: 0}),
      yAxis: {type: 'category', data: rows, inverse: true},
      series: [{type: 'custom', encode: {x: [1, 2], y: 0}, data: (spec.segments || []).map(function (s) {
        return [s.row, s.from, s.to, s.label];
      }), renderItem: function (params, api) {
        var start = api.coord([api.value(1), api.value(0)]);
        var end = api.coord([api.value(2), api.value(0)]);
        var h = api.size([0, 1])[1] * 0.6;
        return {type: 'rect', shape: {x: start[0], y: start[1] - h / 2, width: Math.max(end[0] - start[0], 1), height: h},
          style: {fill: palette[params.dataIndex % palette.length]}};
      }}]
    };
  }

  function option(spec) {
    if (spec.kind === 'timeline') return timeline(spec);
    var hasY2 = (spec.series || []).some(function (s) { return s.y2; });
    var category = spec.categories && spec.categories.length > 0;
    var series = (spec.series || []).map(function (s, i) {
      var type = s.type || 'line';
      var o = {name: s.name, type: type, yAxisIndex: s.y2 ? 1 : 0, showSymbol: type !== 'line' || s.y.length < 60,
        connectNulls: false, data: category ? s.y : zip(s.x || spec.x, s.y), itemStyle: {color: s.color || palette[i % palette.length]}};
      if (s.dashed) o.lineStyle = {type: 'dashed'};
      if (s.stack) o.stack = s.stack;
      if (type === 'line' && s.y.length > 600) o.sampling = 'lttb';
      return o;
    });
    if (series.length > 0) {
      var first = series[0];
      // A line on the right axis hangs on the first series drawn against it.
      var onY2 = (spec.mark_y || []).filter(function (m) { return m.y2; });
      var y2Series = series.filter(function (s) { return s.yAxisIndex === 1; })[0];
      if (onY2.length && y2Series) y2Series.markLine = {symbol: 'none', silent: true, data: markLines(onY2, false)};
      var lines = markLines((spec.mark_y || []).filter(function (m) { return !m.y2; }), false).concat(markLines(spec.mark_x, true));
      if (lines.length) first.markLine = {symbol: 'none', silent: true, data: lines};
      if (spec.areas && spec.areas.length) {
        first.markArea = {silent: true, itemStyle: {color: 'rgba(120,120,120,0.12)'}, data: spec.areas.map(function (a) {
          return [{name: a.label, xAxis: a.from, label: {color: '#666'}}, {xAxis: a.to}];
        })};
      }
    }
    // A reference line (an SLA, a bound) is always within its axis: the
    // axis reaches it even when the data stay far below.
    var reach = function (marks) {
      var top = null;
      marks.forEach(function (m) { if (top === null || m.value > top) top = m.value; });
      return top === null ? {} : {max: function (r) { return Math.max(r.max, top * 1.05); }};
    };
    var yOpts = reach((spec.mark_y || []).filter(function (m) { return !m.y2; }));
    yOpts.nameGap = 45; yOpts.nameRotate = 90;
    var y = [axis(spec.y_log ? 'log' : 'value', spec.y_name, yOpts)];
    var y2Opts = reach((spec.mark_y || []).filter(function (m) { return m.y2; }));
    y2Opts.nameGap = 45; y2Opts.nameRotate = 90; y2Opts.splitLine = {show: false};
    if (hasY2) y.push(axis('value', spec.y2_name, y2Opts));
    var x = category ? {type: 'category', data: spec.categories, name: spec.x_name || '', nameLocation: 'middle', nameGap: 30,
        axisLabel: {interval: 0, rotate: spec.categories.length > 12 ? 60 : 0}}
      : axis(spec.x_log ? 'log' : 'value', spec.x_name, spec.x_log ? {min: 'dataMin', max: 'dataMax'} : {});
    return {
      animation: false,
      color: palette,
      tooltip: {trigger: 'axis', renderMode: 'richText'},
      legend: {top: 0, type: 'scroll'},
      grid: {left: 70, right: hasY2 ? 70 : 25, top: 40, bottom: 50},
      xAxis: x, yAxis: y, series: series
    };
  }

  function render() {
    var node = document.getElementById('calibra-data');
    if (!node || typeof echarts === 'undefined') return;
    var data = JSON.parse(node.textContent);
    var charts = [];
    (data.charts || []).forEach(function (spec) {
      var el = document.getElementById(spec.id);
      if (!el) return;
      var c = echarts.init(el, null, {renderer: 'canvas'});
      c.setOption(option(spec));
      el.setAttribute('data-rendered', 'true');
      charts.push(c);
    });
    var resize = function () { charts.forEach(function (c) { c.resize(); }); };
    window.addEventListener('resize', resize);
    window.addEventListener('beforeprint', resize);
    var root = document.documentElement;
    root.setAttribute('data-charts', String(charts.length));
    // Milliseconds from navigation to the last chart drawn, for measuring.
    root.setAttribute('data-render-ms', String(Math.round(performance.now())));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
