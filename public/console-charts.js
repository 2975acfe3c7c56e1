/*
 * The console dashboard's charts: each `.dashboard-plot` holds its data as JSON in `data-chart`
 * ({ times: Unix seconds, series: [{ label, values }] }), drawn with uPlot (loaded before this
 * script, from this origin). The tables beside the charts hold the same numbers, so the page
 * says everything without this script. Colours come from the stylesheet (console.css, light and
 * dark), and the charts are drawn again when the width or the colour scheme changes.
 */

(() => {
  const HEIGHT = 200;
  const plots = [];

  function options(element, data) {
    const style = getComputedStyle(element);
    const colour = (index) => style.getPropertyValue(`--chart-${(index % 7) + 1}`).trim() || style.color;
    const grid = style.getPropertyValue('--chart-grid').trim() || 'rgba(128, 128, 128, 0.3)';
    const axis = { stroke: style.color, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    // Times in UTC, in the page's language: hours and minutes, or the day for a week.
    const span = data.times.length > 1 ? data.times[data.times.length - 1] - data.times[0] : 0;
    const format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
      timeZone: 'UTC',
      ...(span > 2 * 86400 ? { month: 'short', day: 'numeric' } : { hour: '2-digit', minute: '2-digit' }),
    });
    const wholeSteps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7];
    return {
      width: Math.max(200, element.clientWidth),
      height: HEIGHT,
      // The page says its times are UTC; uPlot would otherwise draw them in the browser's zone.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
      scales: { y: { range: (_plot, _min, max) => [0, Math.max(1, max * 1.1)] } },
      series: [
        {},
        ...data.series.map((series, index) => ({
          label: series.label,
          stroke: colour(index),
          width: 2,
          points: { show: false },
        })),
      ],
      axes: [
        {
          ...axis,
          values: (_plot, splits) => splits.map((seconds) => format.format(new Date(seconds * 1000))),
        },
        { ...axis, size: 56, ...(data.whole ? { incrs: wholeSteps } : {}) },
      ],
      legend: { live: false },
    };
  }

  function draw(element) {
    const data = JSON.parse(element.dataset.chart);
    element.replaceChildren();
    const columns = [data.times, ...data.series.map((series) => series.values)];
    plots.push({ element, plot: new uPlot(options(element, data), columns, element) });
  }

  function drawAll() {
    for (const { plot } of plots.splice(0)) plot.destroy();
    for (const element of document.querySelectorAll('.dashboard-plot[data-chart]')) draw(element);
  }

  let resizing;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const { element, plot } of plots)
        plot.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT });
    }, 100);
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', drawAll);
  drawAll();
})();
