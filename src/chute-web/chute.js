// chute.js: the dashboard's live updates, the one script its pages load
// (served by chute-web itself; the Content-Security-Policy allows no
// other, and no inline script).  On the overview it opens the server's
// event stream (/events) and puts each reading into the page: as text
// (textContent) and attribute values only, never as markup, so that an
// ID or a reason is shown as the characters it is.
"use strict";
(function () {
	var STATES = ["wait", "new", "cur", "defer", "done", "failed"];
	var HOUR = 60, HEIGHT = 100;
	var page = document.getElementById("overview");

	if (!page || !window.EventSource)
		return;

	function text(id, s) {
		var e = document.getElementById(id);
		if (e)
			e.textContent = s;
	}

	function shown(id, on) {
		var e = document.getElementById(id);
		if (e)
			e.hidden = !on;
	}

	function bar(id, y, h) {
		var e = document.getElementById(id);
		if (e) {
			e.setAttribute("y", String(y));
			e.setAttribute("height", String(h));
		}
	}

	// The same rule as the server's SVG: scaled to the busiest minute.
	function chart(d) {
		var max = d.max > 0 ? d.max : 1;
		for (var k = 0; k < HOUR; k++) {
			var hd = Math.floor(d.done[k] * HEIGHT / max);
			var hf = Math.floor(d.failed[k] * HEIGHT / max);
			bar("d" + k, HEIGHT - hd, hd);
			bar("f" + k, HEIGHT - hd - hf, hf);
		}
		text("chart-max", String(d.max));
	}

	function cell(tr, s) {
		var td = document.createElement("td");
		td.textContent = s;
		tr.appendChild(td);
		return td;
	}

	// A job's link: the server made its href; only that shape is taken.
	function link(td, it) {
		var a = document.createElement("a");
		a.className = "id";
		a.textContent = it.id;
		if (/^\/job\?id=[A-Za-z0-9%._~-]+$/.test(it.href))
			a.setAttribute("href", it.href);
		td.appendChild(a);
	}

	function rows(id, items, failed, claims) {
		var body = document.getElementById(id);
		if (!body)
			return;
		while (body.firstChild)
			body.removeChild(body.firstChild);
		items.forEach(function (it) {
			var tr = document.createElement("tr");
			cell(tr, failed ? it.age + " ago" : it.age);
			if (failed) {
				cell(tr, String(it.attempts));
				cell(tr, it.reason);
			} else if (claims)
				cell(tr, it.worker);
			link(cell(tr, ""), it);
			body.appendChild(tr);
		});
	}

	function keys(d) {
		var body = document.getElementById("keys");
		if (!body || !d.keys)
			return;
		while (body.firstChild)
			body.removeChild(body.firstChild);
		d.keys.forEach(function (k) {
			var tr = document.createElement("tr");
			cell(tr, k.key);
			cell(tr, String(k.running));
			cell(tr, String(k.waiting));
			cell(tr, k.max);
			cell(tr, k.rate);
			body.appendChild(tr);
		});
		text("keys-all", String(d.keys_all));
		shown("keysbox", d.keys.length > 0);
	}

	function scheds(d) {
		var body = document.getElementById("scheds");
		if (!body || !d.scheds)
			return;
		while (body.firstChild)
			body.removeChild(body.firstChild);
		d.scheds.forEach(function (c) {
			var tr = document.createElement("tr");
			cell(tr, c.name);
			cell(tr, c.every);
			cell(tr, c.next);
			cell(tr, c.last);
			body.appendChild(tr);
		});
		text("scheds-all", String(d.scheds_all));
		shown("schedbox", d.scheds.length > 0);
	}

	function show(d) {
		var err = document.getElementById("error");
		STATES.forEach(function (s) {
			text("c-" + s, String(d.counts[s]));
		});
		text("running", String(d.running));
		text("oldest", d.oldest);
		text("owner", d.owner);
		text("minute", d.minute);
		text("paused", d.paused);
		text("at", "0s");
		if (err) {
			err.textContent = d.error;
			err.hidden = d.error === "";
		}
		shown("pause", !d.is_paused);
		shown("resume", d.is_paused);
		chart(d);
		rows("run", d.run, false, d.claims);
		rows("fail", d.fail, true, d.claims);
		keys(d);
		scheds(d);
		page.setAttribute("data-updates",
		    String(Number(page.getAttribute("data-updates") || 0) + 1));
	}

	var es = new EventSource("/events");
	es.addEventListener("overview", function (ev) {
		var d;
		try {
			d = JSON.parse(ev.data);
		} catch (e) {
			return;
		}
		document.body.classList.remove("stale");
		show(d);
	});
	es.addEventListener("error", function () {
		document.body.classList.add("stale");
	});
})();
