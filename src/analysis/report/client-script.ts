/**
 * The report's only script, inlined into the page. Plain ES2020 written without template literals so
 * it can live in a String.raw block. Drawing goes through requestAnimationFrame and visits only
 * frames wider than half a pixel, so a zoomed-out 1M-sample profile costs what its visible frames cost.
 * `window.flameox` is the stable hook for tests and agents: frames(), zoom(), reset(), search().
 */
export const clientScript = `
(function () {
  "use strict";
  var dataElement = document.getElementById("flameox-data");
  var data = JSON.parse(dataElement ? dataElement.textContent || "{}" : "{}");
  var api = { ready: false, graphs: {}, timeline: null };
  window.flameox = api;
  api.frames = function (id) { var graph = api.graphs[id || "profile"]; return graph ? graph.frames() : []; };
  api.zoom = function (target, id) { var graph = api.graphs[id || "profile"]; return graph ? graph.zoom(target) : false; };
  api.reset = function (id) { var graph = api.graphs[id || "profile"]; if (graph) graph.reset(); };
  api.search = function (text, id) { var graph = api.graphs[id || "profile"]; return graph ? graph.search(text) : null; };

  function formatWeight(value, unit) {
    var magnitude = Math.abs(value);
    if (unit === "samples") return (Number.isInteger(value) ? String(value) : value.toFixed(2)) + (value === 1 ? " sample" : " samples");
    if (unit === "bytes") {
      var steps = ["B", "KiB", "MiB", "GiB", "TiB"];
      var scaled = value;
      var step = 0;
      while (Math.abs(scaled) >= 1024 && step < steps.length - 1) { scaled /= 1024; step += 1; }
      return (step === 0 ? String(Math.round(scaled)) : scaled.toFixed(scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2)) + " " + steps[step];
    }
    if (magnitude >= 1e9) return (value / 1e9).toFixed(magnitude >= 1e11 ? 0 : 2) + " s";
    if (magnitude >= 1e6) return (value / 1e6).toFixed(magnitude >= 1e8 ? 0 : 2) + " ms";
    if (magnitude >= 1e3) return (value / 1e3).toFixed(magnitude >= 1e5 ? 0 : 2) + " µs";
    return Math.round(value) + " ns";
  }
  function percent(share) { return (share * 100).toFixed(2) + "%"; }
  function points(share) { var value = share * 100; return (value >= 0 ? "+" : "") + value.toFixed(2) + " pp"; }
  function hash(text) {
    var value = 2166136261;
    for (var index = 0; index < text.length; index += 1) { value ^= text.charCodeAt(index); value = Math.imul(value, 16777619); }
    return value >>> 0;
  }
  function warmColour(name) {
    var value = hash(name);
    return "rgb(" + (205 + (value % 50)) + "," + (80 + ((value >>> 8) % 150)) + "," + ((value >>> 16) % 55) + ")";
  }
  function differentialColour(delta, largest) {
    if (largest <= 0 || Math.abs(delta) < 1e-12) return "rgb(225,225,225)";
    var strength = Math.min(1, Math.abs(delta) / largest);
    var fade = Math.round(225 - 170 * strength);
    return delta > 0 ? "rgb(235," + fade + "," + fade + ")" : "rgb(" + fade + "," + fade + ",235)";
  }
  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, function (character) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[character];
    });
  }
  function makeMatcher(text) {
    var trimmed = (text || "").trim();
    if (!trimmed) return null;
    if (trimmed.length > 2 && trimmed.charAt(0) === "/" && trimmed.charAt(trimmed.length - 1) === "/") {
      try { var pattern = new RegExp(trimmed.slice(1, -1), "i"); return function (value) { return pattern.test(value); }; } catch (error) { /* not a pattern: fall back to text */ }
    }
    var needle = trimmed.toLowerCase();
    return function (value) { return value.toLowerCase().indexOf(needle) !== -1; };
  }
  function placeOf(frame) {
    if (!frame[1]) return "";
    return frame[2] === null ? frame[1] : frame[1] + ":" + frame[2];
  }
  function positionTooltip(tooltip, event) {
    var margin = 14;
    var width = tooltip.offsetWidth;
    var height = tooltip.offsetHeight;
    var left = event.clientX + margin;
    var top = event.clientY + margin;
    if (left + width > window.innerWidth - 4) left = Math.max(4, event.clientX - width - margin);
    if (top + height > window.innerHeight - 4) top = Math.max(4, event.clientY - height - margin);
    tooltip.style.left = left + "px";
    tooltip.style.top = top + "px";
  }

  function FlameGraph(container, graph) {
    var canvas = container.querySelector("canvas");
    var tooltip = container.querySelector(".tooltip");
    var searchBox = container.querySelector("input[type=search]");
    var resetButton = container.querySelector("button.reset");
    var status = container.querySelector(".status");
    var context = canvas.getContext("2d");
    var count = graph.frame.length;
    var rowHeight = 18;
    var minimumWidth = 0.5;
    var differential = !!graph.baseline;
    var subtreeEnd = new Int32Array(count);
    var stack = [];
    for (var index = 0; index < count; index += 1) {
      while (stack.length && graph.depth[stack[stack.length - 1]] >= graph.depth[index]) subtreeEnd[stack.pop()] = index;
      stack.push(index);
    }
    while (stack.length) subtreeEnd[stack.pop()] = count;
    var names = graph.frame.map(function (frameIndex) { return graph.frames[frameIndex][0]; });
    var colours = names.map(function (name, nodeIndex) { return nodeIndex === 0 ? "rgb(200,200,200)" : warmColour(name); });
    if (differential) {
      var largest = 0;
      for (var node = 1; node < count; node += 1) largest = Math.max(largest, Math.abs(graph.baseline.delta[node]));
      colours = graph.baseline.delta.map(function (delta) { return differentialColour(delta, largest); });
    }
    var highlighted = new Uint8Array(count);
    var zoomed = 0;
    var hovered = -1;
    var rects = [];
    var layoutWidth = -1;
    var layoutZoom = -1;
    var drawPending = false;
    var matchedShare = 0;
    var matchedCount = 0;
    var characterWidth = 7;

    function width() { return Math.max(200, Math.floor(canvas.parentElement.clientWidth)); }
    function layout() {
      var cssWidth = width();
      if (cssWidth === layoutWidth && zoomed === layoutZoom) return;
      layoutWidth = cssWidth;
      layoutZoom = zoomed;
      rects = [];
      var ancestors = [];
      for (var ancestor = graph.parent[zoomed]; ancestor >= 0; ancestor = graph.parent[ancestor]) ancestors.push(ancestor);
      for (var position = ancestors.length - 1; position >= 0; position -= 1) rects.push({ index: ancestors[position], x: 0, width: cssWidth, dimmed: true });
      var zoomStart = graph.start[zoomed];
      var zoomWeight = graph.weight[zoomed] || 1;
      var node = zoomed;
      var end = subtreeEnd[zoomed];
      while (node < end) {
        var nodeWidth = (graph.weight[node] / zoomWeight) * cssWidth;
        if (nodeWidth < minimumWidth) { node = subtreeEnd[node]; continue; }
        rects.push({ index: node, x: ((graph.start[node] - zoomStart) / zoomWeight) * cssWidth, width: nodeWidth, dimmed: false });
        node += 1;
      }
    }
    function draw() {
      drawPending = false;
      layout();
      var ratio = window.devicePixelRatio || 1;
      var cssHeight = (graph.max_depth + 1) * rowHeight;
      if (canvas.width !== Math.round(layoutWidth * ratio) || canvas.height !== Math.round(cssHeight * ratio)) {
        canvas.width = Math.round(layoutWidth * ratio);
        canvas.height = Math.round(cssHeight * ratio);
        canvas.style.width = layoutWidth + "px";
        canvas.style.height = cssHeight + "px";
      }
      context.setTransform(ratio, 0, 0, ratio, 0, 0);
      context.clearRect(0, 0, layoutWidth, cssHeight);
      context.font = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
      context.textBaseline = "middle";
      characterWidth = context.measureText("abcdefghijklmnopqrstuvwxyz").width / 26 || 7;
      for (var position = 0; position < rects.length; position += 1) {
        var rect = rects[position];
        var node = rect.index;
        var y = graph.depth[node] * rowHeight;
        context.globalAlpha = rect.dimmed ? 0.5 : 1;
        context.fillStyle = highlighted[node] ? "rgb(214,51,255)" : colours[node];
        context.fillRect(rect.x, y, Math.max(rect.width - 0.5, 0.5), rowHeight - 1);
        if (node === hovered) {
          context.strokeStyle = "#111";
          context.lineWidth = 1;
          context.strokeRect(rect.x + 0.5, y + 0.5, Math.max(rect.width - 1.5, 0.5), rowHeight - 2);
        }
        if (rect.width > 26) {
          var fitting = Math.floor((rect.width - 6) / characterWidth);
          var name = names[node];
          var label = name.length <= fitting ? name : name.slice(0, Math.max(fitting - 1, 1)) + "…";
          context.fillStyle = highlighted[node] ? "#fff" : "#1a1a1a";
          context.fillText(label, rect.x + 3, y + rowHeight / 2);
        }
      }
      context.globalAlpha = 1;
    }
    function scheduleDraw() {
      if (drawPending) return;
      drawPending = true;
      window.requestAnimationFrame(draw);
    }
    function hit(x, y) {
      layout();
      var depth = Math.floor(y / rowHeight);
      for (var position = 0; position < rects.length; position += 1) {
        var rect = rects[position];
        if (graph.depth[rect.index] === depth && x >= rect.x && x < rect.x + rect.width) return rect;
      }
      return null;
    }
    function describe(node) {
      var frame = graph.frames[graph.frame[node]];
      var place = placeOf(frame);
      var lines = ["<strong>" + escapeHtml(frame[0]) + "</strong>"];
      if (place) lines.push('<span class="muted">' + escapeHtml(place) + "</span>");
      lines.push("self " + formatWeight(graph.self[node], graph.unit) + " · total " + formatWeight(graph.weight[node], graph.unit));
      lines.push("share " + percent(graph.total > 0 ? graph.weight[node] / graph.total : 0) +
        (zoomed !== 0 ? " of all · " + percent(graph.weight[zoomed] > 0 ? graph.weight[node] / graph.weight[zoomed] : 0) + " of zoom" : ""));
      if (differential) {
        var baseShare = graph.baseline.total > 0 ? graph.baseline.weight[node] / graph.baseline.total : 0;
        lines.push("baseline " + percent(baseShare) + " → candidate " + percent(graph.total > 0 ? graph.weight[node] / graph.total : 0) +
          " (" + points(graph.baseline.delta[node]) + ")");
      }
      return lines.join("<br>");
    }
    function applySearch(text) {
      var matcher = makeMatcher(text);
      highlighted.fill(0);
      matchedShare = 0;
      matchedCount = 0;
      if (matcher) {
        var coveredUntil = -1;
        var matchedWeight = 0;
        for (var node = 1; node < count; node += 1) {
          var frame = graph.frames[graph.frame[node]];
          if (!matcher(frame[0]) && !(frame[1] && matcher(frame[1]))) continue;
          highlighted[node] = 1;
          matchedCount += 1;
          if (node >= coveredUntil) { matchedWeight += graph.weight[node]; coveredUntil = subtreeEnd[node]; }
        }
        matchedShare = graph.total > 0 ? matchedWeight / graph.total : 0;
      }
      updateStatus(matcher !== null);
      scheduleDraw();
      return { matched_frames: matchedCount, matched_share: matchedShare };
    }
    function updateStatus(searching) {
      var parts = [];
      if (zoomed !== 0) parts.push("zoomed to " + names[zoomed]);
      if (searching) parts.push("matched " + matchedCount + " frames, " + percent(matchedShare) + " of total");
      if (graph.omitted_nodes > 0) parts.push(graph.omitted_nodes + " small frames not drawn");
      status.textContent = parts.join(" · ");
    }
    function zoomTo(node) {
      zoomed = node >= 0 && node < count ? node : 0;
      updateStatus(!!(searchBox && searchBox.value.trim()));
      scheduleDraw();
    }
    canvas.addEventListener("mousemove", function (event) {
      var bounds = canvas.getBoundingClientRect();
      var rect = hit(event.clientX - bounds.left, event.clientY - bounds.top);
      var next = rect ? rect.index : -1;
      if (next !== hovered) { hovered = next; scheduleDraw(); }
      if (rect) {
        tooltip.innerHTML = describe(rect.index);
        tooltip.hidden = false;
        positionTooltip(tooltip, event);
        canvas.style.cursor = "pointer";
      } else {
        tooltip.hidden = true;
        canvas.style.cursor = "default";
      }
    });
    canvas.addEventListener("mouseleave", function () { tooltip.hidden = true; if (hovered !== -1) { hovered = -1; scheduleDraw(); } });
    canvas.addEventListener("click", function (event) {
      var bounds = canvas.getBoundingClientRect();
      var rect = hit(event.clientX - bounds.left, event.clientY - bounds.top);
      if (rect) zoomTo(rect.index);
    });
    if (resetButton) resetButton.addEventListener("click", function () { zoomTo(0); });
    if (searchBox) searchBox.addEventListener("input", function () { applySearch(searchBox.value); });
    container.addEventListener("keydown", function (event) { if (event.key === "Escape") zoomTo(0); });
    window.addEventListener("resize", scheduleDraw);
    scheduleDraw();
    updateStatus(false);

    return {
      frames: function () {
        layout();
        return rects.map(function (rect) {
          var node = rect.index;
          var frame = graph.frames[graph.frame[node]];
          return {
            index: node, parent: graph.parent[node], name: frame[0], file: frame[1], line: frame[2],
            x: rect.x, y: graph.depth[node] * rowHeight, width: rect.width, height: rowHeight - 1, depth: graph.depth[node],
            self: graph.self[node], total: graph.weight[node], share: graph.total > 0 ? graph.weight[node] / graph.total : 0,
            highlighted: highlighted[node] === 1, dimmed: rect.dimmed,
            delta_share: differential ? graph.baseline.delta[node] : null,
          };
        });
      },
      zoom: function (target) {
        var node = typeof target === "number" ? target : names.indexOf(String(target));
        if (node < 0) return false;
        zoomTo(node);
        return true;
      },
      reset: function () { zoomTo(0); },
      search: function (text) { if (searchBox) searchBox.value = text; return applySearch(text); },
      zoomed: function () { return zoomed; },
      width: function () { layout(); return layoutWidth; },
    };
  }

  function Timeline(container, timeline) {
    var canvas = container.querySelector("canvas");
    var tooltip = container.querySelector(".tooltip");
    var resetButton = container.querySelector("button.reset");
    var context = canvas.getContext("2d");
    var rowHeight = 14;
    var laneGap = 8;
    var labelWidth = 170;
    var axisHeight = 20;
    var laneTop = [];
    var top = axisHeight;
    timeline.lanes.forEach(function (lane) { laneTop.push(top); top += lane.rows * rowHeight + laneGap; });
    var cssHeight = top;
    var span = Math.max(timeline.end_ns - timeline.start_ns, 1);
    var viewStart = 0;
    var viewEnd = span;
    var drawPending = false;
    var hovered = -1;
    var dragging = null;
    var eventCount = timeline.events.length / 6;

    function plotWidth() { return Math.max(100, Math.floor(canvas.parentElement.clientWidth) - labelWidth); }
    function xOf(time, widthPx) { return labelWidth + ((time - viewStart) / (viewEnd - viewStart)) * widthPx; }
    function formatTime(value) { return formatWeight(value, "ns"); }
    function draw() {
      drawPending = false;
      var widthPx = plotWidth();
      var cssWidth = widthPx + labelWidth;
      var ratio = window.devicePixelRatio || 1;
      if (canvas.width !== Math.round(cssWidth * ratio) || canvas.height !== Math.round(cssHeight * ratio)) {
        canvas.width = Math.round(cssWidth * ratio);
        canvas.height = Math.round(cssHeight * ratio);
        canvas.style.width = cssWidth + "px";
        canvas.style.height = cssHeight + "px";
      }
      context.setTransform(ratio, 0, 0, ratio, 0, 0);
      context.clearRect(0, 0, cssWidth, cssHeight);
      context.font = "11px system-ui, -apple-system, 'Segoe UI', sans-serif";
      context.textBaseline = "middle";
      context.fillStyle = "#555";
      for (var tick = 0; tick <= 5; tick += 1) {
        var time = viewStart + ((viewEnd - viewStart) * tick) / 5;
        var tickX = labelWidth + (widthPx * tick) / 5;
        context.fillRect(tickX, axisHeight - 5, 1, 5);
        context.textAlign = tick === 5 ? "right" : tick === 0 ? "left" : "center";
        context.fillText(formatTime(time), tickX, 8);
      }
      context.textAlign = "left";
      timeline.lanes.forEach(function (lane, laneIndex) {
        context.fillStyle = laneIndex % 2 ? "#f4f4f4" : "#fafafa";
        context.fillRect(0, laneTop[laneIndex] - laneGap / 2, cssWidth, lane.rows * rowHeight + laneGap);
        context.fillStyle = "#333";
        context.fillText(lane.label.length > 26 ? lane.label.slice(0, 25) + "…" : lane.label, 4, laneTop[laneIndex] + rowHeight / 2);
      });
      context.save();
      context.beginPath();
      context.rect(labelWidth, 0, widthPx, cssHeight);
      context.clip();
      var events = timeline.events;
      for (var index = 0; index < eventCount; index += 1) {
        var offset = index * 6;
        var start = events[offset + 1];
        var duration = events[offset + 2];
        if (start > viewEnd || start + duration < viewStart) continue;
        var x = xOf(start, widthPx);
        var eventWidth = Math.max((duration / (viewEnd - viewStart)) * widthPx, 1);
        var y = laneTop[events[offset]] + events[offset + 3] * rowHeight;
        var name = timeline.names[events[offset + 4]];
        context.fillStyle = index === hovered ? "#222" : warmColour(name);
        context.fillRect(x, y, eventWidth, rowHeight - 1);
        if (eventWidth > 40) {
          context.fillStyle = index === hovered ? "#fff" : "#1a1a1a";
          var fitting = Math.floor((eventWidth - 6) / 6.5);
          context.fillText(name.length <= fitting ? name : name.slice(0, Math.max(fitting - 1, 1)) + "…", Math.max(x, labelWidth) + 3, y + rowHeight / 2);
        }
      }
      context.restore();
    }
    function scheduleDraw() { if (!drawPending) { drawPending = true; window.requestAnimationFrame(draw); } }
    function hit(x, y) {
      var widthPx = plotWidth();
      if (x < labelWidth) return -1;
      var time = viewStart + ((x - labelWidth) / widthPx) * (viewEnd - viewStart);
      var slack = (2 / widthPx) * (viewEnd - viewStart);
      var events = timeline.events;
      var found = -1;
      for (var index = 0; index < eventCount; index += 1) {
        var offset = index * 6;
        var rowY = laneTop[events[offset]] + events[offset + 3] * rowHeight;
        if (y < rowY || y >= rowY + rowHeight) continue;
        if (time >= events[offset + 1] - slack && time <= events[offset + 1] + events[offset + 2] + slack) found = index;
      }
      return found;
    }
    canvas.addEventListener("mousemove", function (event) {
      var bounds = canvas.getBoundingClientRect();
      var x = event.clientX - bounds.left;
      if (dragging) {
        var shift = ((dragging.x - x) / plotWidth()) * (dragging.end - dragging.start);
        viewStart = dragging.start + shift;
        viewEnd = dragging.end + shift;
        scheduleDraw();
        return;
      }
      var index = hit(x, event.clientY - bounds.top);
      if (index !== hovered) { hovered = index; scheduleDraw(); }
      if (index >= 0) {
        var offset = index * 6;
        var category = timeline.events[offset + 5];
        tooltip.innerHTML = "<strong>" + escapeHtml(timeline.names[timeline.events[offset + 4]]) + "</strong><br>" +
          (category >= 0 ? escapeHtml(timeline.categories[category]) + "<br>" : "") +
          escapeHtml(timeline.lanes[timeline.events[offset]].label) + "<br>start +" + formatTime(timeline.events[offset + 1]) +
          " · duration " + formatTime(timeline.events[offset + 2]);
        tooltip.hidden = false;
        positionTooltip(tooltip, event);
      } else {
        tooltip.hidden = true;
      }
    });
    canvas.addEventListener("mouseleave", function () { tooltip.hidden = true; dragging = null; });
    canvas.addEventListener("mousedown", function (event) {
      var bounds = canvas.getBoundingClientRect();
      dragging = { x: event.clientX - bounds.left, start: viewStart, end: viewEnd };
    });
    window.addEventListener("mouseup", function () { dragging = null; });
    canvas.addEventListener("wheel", function (event) {
      event.preventDefault();
      var bounds = canvas.getBoundingClientRect();
      var fraction = Math.min(Math.max((event.clientX - bounds.left - labelWidth) / plotWidth(), 0), 1);
      var pivot = viewStart + fraction * (viewEnd - viewStart);
      var factor = event.deltaY > 0 ? 1.25 : 0.8;
      var nextSpan = Math.min(Math.max((viewEnd - viewStart) * factor, 1000), span * 4);
      viewStart = pivot - fraction * nextSpan;
      viewEnd = viewStart + nextSpan;
      scheduleDraw();
    }, { passive: false });
    function reset() { viewStart = 0; viewEnd = span; scheduleDraw(); }
    canvas.addEventListener("dblclick", reset);
    if (resetButton) resetButton.addEventListener("click", reset);
    window.addEventListener("resize", scheduleDraw);
    scheduleDraw();
    return {
      events: function () {
        var widthPx = plotWidth();
        var list = [];
        for (var index = 0; index < eventCount; index += 1) {
          var offset = index * 6;
          list.push({ lane: timeline.events[offset], name: timeline.names[timeline.events[offset + 4]], start_ns: timeline.events[offset + 1],
            duration_ns: timeline.events[offset + 2], depth: timeline.events[offset + 3], x: xOf(timeline.events[offset + 1], widthPx) });
        }
        return list;
      },
      lanes: function () { return timeline.lanes.slice(); },
      reset: reset,
    };
  }

  (data.graphs || []).forEach(function (graph) {
    var container = document.querySelector('[data-graph="' + graph.id + '"]');
    if (container) api.graphs[graph.id] = FlameGraph(container, graph);
  });
  if (data.timeline) {
    var timelineContainer = document.querySelector("[data-timeline]");
    if (timelineContainer) api.timeline = Timeline(timelineContainer, data.timeline);
  }
  api.ready = true;
})();
`;
