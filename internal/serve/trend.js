// calibra serve's trend chart: one figure across runs over time, a line
// of medians per target (a day's runs, or each run), its spread as a bar
// from min to max, the regressed ones marked, zoomed by a slider.
// Text goes to canvas only (richText tooltips): no label is parsed as HTML.
(function () {
  'use strict';
  var palette = ['#2f5d8a', '#c0504d', '#6a9f3d', '#8064a2', '#d98b2b', '#4aacc6', '#7f7f7f'];

  function fmt(v) { return Math.round(v * 100) / 100; }

  function draw() {
    var node = document.getElementById('trend-data');
    var el = document.getElementById('trend');
    if (!node || !el || typeof echarts === 'undefined') return;
    var data = JSON.parse(node.textContent);
    var series = [];
    data.series.forEach(function (s, i) {
      var color = palette[i % palette.length];
      // A run (or a day with a run) that regressed against its baseline: a red mark.
      series.push({name: s.name, type: 'scatter', symbolSize: 13, symbol: 'diamond', itemStyle: {color: '#c0504d'}, z: 5,
        data: s.points.filter(function (p) { return p[5] > 0; }).map(function (p) { return [p[0], p[1], p[5]]; }),
        tooltip: {formatter: function (p) { return p.value[2] + ' regressed against its baseline'; }}});
      series.push({name: s.name, type: 'line', data: s.points.map(function (p) { return [p[0], p[1]]; }),
        showSymbol: true, symbol: 'circle', symbolSize: 7, itemStyle: {color: color},
        tooltip: {formatter: function (p) {
          var q = s.points[p.dataIndex];
          var text = s.labels[p.dataIndex] + ' (' + s.name + ')\n' + new Date(q[0]).toISOString().replace('T', ' ').slice(0, 19) +
            ' UTC\nmedian ' + fmt(q[1]) + ' ' + data.unit;
          if (q[4] > 1) text += '\nrange ' + fmt(q[2]) + ' to ' + fmt(q[3]) + ' over ' + q[4] + (data.per_day ? ' runs' : ' repeats');
          if (q[5] > 0) text += '\n' + q[5] + ' regressed against its baseline';
          return text;
        }}});
      // The range of a run's repeats: a vertical bar with caps.
      series.push({name: s.name, type: 'custom', silent: true, itemStyle: {color: color},
        data: s.points.filter(function (p) { return p[4] > 1; }).map(function (p) { return [p[0], p[2], p[3]]; }),
        encode: {x: 0, y: [1, 2]},
        renderItem: function (params, api) {
          var lo = api.coord([api.value(0), api.value(1)]), hi = api.coord([api.value(0), api.value(2)]);
          var style = {stroke: color, lineWidth: 1.5};
          return {type: 'group', children: [
            {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: style},
            {type: 'line', shape: {x1: lo[0] - 4, y1: lo[1], x2: lo[0] + 4, y2: lo[1]}, style: style},
            {type: 'line', shape: {x1: hi[0] - 4, y1: hi[1], x2: hi[0] + 4, y2: hi[1]}, style: style}]};
        }});
    });
    var chart = echarts.init(el, null, {renderer: 'canvas'});
    chart.setOption({
      animation: false,
      tooltip: {trigger: 'item', renderMode: 'richText'},
      legend: {top: 0, type: 'scroll'},
      grid: {left: 80, right: 30, top: 40, bottom: 90},
      dataZoom: [{type: 'inside', xAxisIndex: 0}, {type: 'slider', xAxisIndex: 0, bottom: 10}],
      xAxis: {type: 'time', name: 'run started', nameLocation: 'middle', nameGap: 30},
      yAxis: {type: 'value', name: data.metric + (data.unit ? ' (' + data.unit + ')' : ''), nameLocation: 'middle', nameGap: 60,
        scale: true, splitLine: {lineStyle: {color: '#eee'}}},
      series: series
    });
    window.addEventListener('resize', function () { chart.resize(); });
    el.setAttribute('data-rendered', 'true');
    var points = 0;
    data.series.forEach(function (s) { points += s.points.length; });
    document.documentElement.setAttribute('data-points', String(points));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw);
  else draw();
})();
