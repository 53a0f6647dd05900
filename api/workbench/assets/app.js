// The Errata workbench page: submit a text or a page, then follow the
// analysis live and read its verdict. Everything from the server is put
// into the page as text (textContent), never as markup, and links are
// only ever http(s), so hostile claim or page text stays inert.
"use strict";

(function () {
  var MAX_TEXT = 32000;
  var TERMINAL = { COMPLETE: true, FAILED: true };
  var EVENT_TYPES = [
    "analysis.requested.v1", "analysis.attempt_started.v1", "analysis.exchange_recorded.v1",
    "analysis.claim_extracted.v1", "analysis.claim_triaged.v1", "analysis.query_issued.v1",
    "analysis.source_assessed.v1", "analysis.claim_verdict.v1", "analysis.post_verdict.v1",
    "analysis.completed.v1", "analysis.failed.v1"
  ];
  var LABELS = {
    True: "True", MostlyTrue: "Mostly true", Mixed: "Mixed", Misleading: "Misleading",
    False: "False", Unverifiable: "Unverifiable", Opinion: "Opinion"
  };
  var BANDS = ["TRUE", "MOSTLY-TRUE", "LEANING-TRUE", "MIXED", "UNVERIFIED", "LEANING-FALSE", "MOSTLY-FALSE", "FALSE"];
  var CAP_RULES = {
    no_search_time_sensitive: "no search on a time-sensitive claim",
    stale_sources_current_events: "newest source more than a year old on a current-events claim",
    single_low_tier_source: "a single social-media or blog source",
    approximate_number: "only approximate evidence for a specific number or date",
    coherence_unverifiable: "an unverifiable verdict keeps its confidence low",
    model_confidence: "the model's own confidence was lower"
  };
  var ERROR_TITLES = {
    TEXT_EMPTY: "There is nothing to check",
    TEXT_TOO_LONG: "The text is too long",
    TEXT_CONTROL_CHARACTERS: "The text contains control characters",
    BODY_TOO_LARGE: "The text is far too long",
    URL_INVALID: "That is not a valid web address",
    URL_TOO_LONG: "The address is too long",
    URL_SCHEME: "Only http and https pages can be checked",
    URL_PORT: "That port is not fetched",
    URL_PRIVATE_ADDRESS: "That address is not on the public internet",
    URL_UNREACHABLE: "The page could not be reached",
    URL_HTTP_STATUS: "The page answered with an error",
    URL_TOO_LARGE: "The page is too large",
    URL_NOT_HTML: "That address is not a web page",
    URL_NO_TEXT: "The page has no text to check",
    RATE_LIMITED: "Too many checks for now",
    INPUT_MISSING: "There is nothing to check",
    INPUT_AMBIGUOUS: "Send a text or an address, not both",
    INVALID_JSON: "The request was not understood",
    UNSUPPORTED_MEDIA_TYPE: "The request was not understood"
  };

  // ---- DOM helpers -------------------------------------------------

  function $(id) { return document.getElementById(id); }

  // el builds an element; children are nodes or strings (as text).
  function el(tag, cls) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function replace(node) {
    clear(node);
    for (var i = 1; i < arguments.length; i++) append(node, arguments[i]);
  }

  // safeURL is an absolute http(s) URL string, else null.
  function safeURL(raw) {
    if (typeof raw !== "string" || raw === "") return null;
    try {
      var u = new URL(raw);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch (e) {
      return null;
    }
  }

  function link(href, text) {
    var url = safeURL(href);
    if (url === null) return el("span", null, text || href || "");
    var a = el("a", null, text || url);
    a.href = url;
    a.rel = "noopener noreferrer nofollow";
    a.target = "_blank";
    return a;
  }

  function str(v) { return typeof v === "string" ? v : v === null || v === undefined ? "" : String(v); }
  function num(v) { return typeof v === "number" && isFinite(v) ? v : 0; }
  function prob(v) { return num(v).toFixed(2); }
  function count(n) { return num(n).toLocaleString("en-US"); }
  function chars(s) { return Array.from(str(s)).length; }
  function plural(n, one, many) { return count(n) + " " + (num(n) === 1 ? one : many); }
  function clip(s, n) { var a = Array.from(str(s)); return a.length <= n ? a.join("") : a.slice(0, n).join("") + "…"; }
  function labelName(l) { return Object.prototype.hasOwnProperty.call(LABELS, l) ? LABELS[l] : str(l); }
  function labelClass(l) { return Object.prototype.hasOwnProperty.call(LABELS, l) ? "label-" + l.toLowerCase() : ""; }
  function bandClass(b) { return BANDS.indexOf(b) >= 0 ? "band-" + b.toLowerCase() : ""; }
  function capText(rule) { return Object.prototype.hasOwnProperty.call(CAP_RULES, rule) ? CAP_RULES[rule] : str(rule); }
  function gateClass(g) { return /^(HIGH|MEDIUM|LOW|INSUFFICIENT)$/.test(str(g)) ? "g-" + g.toLowerCase() : ""; }
  function tierClass(t) { return t >= 1 && t <= 5 ? "tier tier-" + t : "tier"; }
  function clock(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? "" : d.toLocaleTimeString("en-GB", { hour12: false });
  }
  function when(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? "" : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }

  function stance(s) {
    var e = num(s.entail), c = num(s.contradict), n = num(s.neutral);
    if (e >= c && e >= n) return "supports";
    if (c >= n) return "refutes";
    return "neutral";
  }

  // ---- Routing -----------------------------------------------------

  var UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
  var current = null; // the open job view's state

  function route() {
    if (current !== null) { current.close(); current = null; }
    var m = /^\/app\/analyses\/([^/]+)\/?$/.exec(location.pathname);
    if (m) {
      showJob(decodeURIComponent(m[1]));
    } else {
      showSubmit();
    }
  }

  function navigate(path) {
    history.pushState(null, "", path);
    route();
  }

  // ---- Submission --------------------------------------------------

  var mode = "text";

  function showSubmit() {
    $("job-view").hidden = true;
    $("new-check").hidden = true;
    $("submit-view").hidden = false;
    document.title = "Errata workbench";
    setMode(mode);
  }

  function setMode(m) {
    mode = m;
    $("tab-text").setAttribute("aria-selected", String(m === "text"));
    $("tab-url").setAttribute("aria-selected", String(m === "url"));
    $("pane-text").hidden = m !== "text";
    $("pane-url").hidden = m !== "url";
    hideFormError();
  }

  function updateCount() {
    var n = chars($("text").value);
    $("text-count").textContent = count(n);
    $("text-count").parentNode.classList.toggle("over", n > MAX_TEXT);
  }

  function hideFormError() { $("form-error").hidden = true; }

  function showFormError(code, message) {
    $("form-error-title").textContent = Object.prototype.hasOwnProperty.call(ERROR_TITLES, code) ? ERROR_TITLES[code] : "The check could not be started";
    $("form-error-message").textContent = message;
    $("form-error").dataset.code = code;
    $("form-error").hidden = false;
  }

  function submit(ev) {
    ev.preventDefault();
    hideFormError();
    var body = mode === "text" ? { text: $("text").value } : { url: $("url").value };
    var button = $("submit-button");
    button.disabled = true;
    $("submit-status").textContent = mode === "url" ? "Fetching the page…" : "Submitting…";
    fetch("/api/v1/analyses", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Errata-Client": "workbench" },
      body: JSON.stringify(body),
      credentials: "same-origin"
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (data) {
        if ((res.status === 200 || res.status === 202) && data && typeof data.id === "string" && UUID.test(data.id)) {
          $("submit-status").textContent = res.status === 200 ? "Already analysed: opening it." : "Started.";
          navigate("/app/analyses/" + data.id.toLowerCase());
          return;
        }
        var err = data && data.error ? data.error : {};
        showFormError(str(err.code), str(err.message) || "The server answered HTTP " + res.status + ".");
        $("submit-status").textContent = "";
      });
    }).catch(function () {
      showFormError("", "The server could not be reached. Check your connection and try again.");
      $("submit-status").textContent = "";
    }).then(function () {
      button.disabled = false;
    });
  }

  // ---- Job: folding the event stream into the job ------------------

  function emptyJob(id) {
    return {
      id: id, status: "PENDING", input: { kind: "", url: null, title: null, platform: null, externalId: null, textLength: 0 },
      versions: { prompts: [], provider: "", model: "", registry: "", policy: "", rubric: "" },
      claims: [], verdict: null, failure: null, createdAt: null, completedAt: null, attempt: 0
    };
  }

  // fold applies one event to job, as the serving projection does for
  // the current attempt.
  function fold(job, type, time, d) {
    var claim = function () {
      for (var i = 0; i < job.claims.length; i++) if (job.claims[i].id === d.claim_id) return job.claims[i];
      return null;
    };
    switch (type) {
      case "analysis.requested.v1":
        if (job.createdAt === null) {
          job.createdAt = time;
          job.input = {
            kind: str(d.input_kind), url: d.url || null, title: d.title || null, platform: d.platform || null,
            externalId: d.external_id || null, textLength: chars(d.text)
          };
        }
        break;
      case "analysis.attempt_started.v1":
        if (num(d.attempt) !== job.attempt) { job.attempt = num(d.attempt); job.claims = []; job.verdict = null; }
        job.status = "RUNNING";
        job.failure = null;
        job.versions = {
          prompts: (d.prompts || []).map(function (p) { return { name: p.name, version: p.version, sha256: p.sha256 }; }),
          provider: str(d.provider), model: str(d.model), registry: str(d.registry_version),
          policy: str(d.policy_version), rubric: str(d.rubric_version)
        };
        break;
      case "analysis.claim_extracted.v1":
        if (num(d.attempt) === job.attempt && claim() === null) {
          job.claims.push({ id: d.claim_id, index: num(d.index), text: str(d.text), context: str(d.context), triage: null, queries: [], sources: [], verdict: null });
          job.claims.sort(function (a, b) { return a.index - b.index; });
        }
        break;
      case "analysis.claim_triaged.v1":
        if (claim()) {
          claim().triage = {
            kind: str(d.kind), specificity: num(d.specificity), timeSensitive: !!d.time_sensitive, currentEvents: !!d.current_events,
            numeric: !!d.numeric, researched: !!d.researched, reason: str(d.reason)
          };
        }
        break;
      case "analysis.query_issued.v1":
        if (claim()) {
          claim().queries.push({
            query: str(d.query), kind: str(d.kind), error: d.error || null,
            results: (d.results || []).map(function (r) { return { url: str(r.url), title: str(r.title), snippet: str(r.snippet), publishedAt: r.published_at || null }; })
          });
        }
        break;
      case "analysis.source_assessed.v1":
        if (claim() && d.source) {
          var s = d.source;
          claim().sources.push({ url: str(s.url), domain: str(s.domain), tier: num(s.tier), rule: str(s.rule), origin: str(s.origin), entail: num(s.entail), contradict: num(s.contradict), neutral: num(s.neutral) });
        }
        break;
      case "analysis.claim_verdict.v1":
        if (claim()) {
          claim().verdict = {
            engine: d.verdict || null, score: num(d.score), gate4: d.gate4 || null, truthPercent: num(d.truth_percent),
            confidence: num(d.confidence), label: str(d.label), band: str(d.band), caps: d.caps || [], summary: str(d.summary)
          };
        }
        break;
      case "analysis.post_verdict.v1":
        if (num(d.attempt) === job.attempt) {
          job.verdict = {
            label: str(d.label), band: str(d.band), truthPercent: num(d.truth_percent), confidence: num(d.confidence),
            caps: d.caps || [], summary: str(d.summary), caveats: d.caveats || [],
            sources: (d.sources || []).map(function (s) { return { url: str(s.url), title: str(s.title), domain: str(s.domain), tier: num(s.tier), fromSearch: !!s.from_search }; })
          };
        }
        break;
      case "analysis.completed.v1":
        job.status = "COMPLETE";
        job.completedAt = time;
        break;
      case "analysis.failed.v1":
        if (!d.retryable) { job.status = "FAILED"; job.failure = str(d.reason); }
        break;
    }
  }

  // describe is the timeline's line for an event: [kind, text, details].
  function describe(job, type, d) {
    var claimNo = function () {
      for (var i = 0; i < job.claims.length; i++) if (job.claims[i].id === d.claim_id) return "claim " + (job.claims[i].index + 1);
      return "a claim";
    };
    switch (type) {
      case "analysis.requested.v1":
        return ["", "Requested: " + (d.input_kind === "URL" ? "page " + str(d.url) : d.input_kind === "POST" ? str(d.platform) + " post" : "text") + ", " + count(chars(d.text)) + " characters"];
      case "analysis.attempt_started.v1":
        return ["", "Attempt " + num(d.attempt) + " started: " + str(d.model) + " via " + str(d.provider)];
      case "analysis.exchange_recorded.v1":
        return ["", "Model call (" + str(d.step) + "): " + (d.error ? "failed" : "answered") + " in " + (num(d.duration_ms) / 1000).toFixed(1) + " s"];
      case "analysis.claim_extracted.v1":
        return ["claim", "Claim " + (num(d.index) + 1) + " extracted: “" + clip(d.text, 160) + "”"];
      case "analysis.claim_triaged.v1":
        return ["gate", "Gate 1, " + claimNo() + ": " + str(d.kind) + ", specificity " + prob(d.specificity) + " → " + (d.researched ? "researched" : "not researched (" + clip(d.reason, 120) + ")")];
      case "analysis.query_issued.v1":
        var results = (d.results || []).slice(0, 3).map(function (r) { return el("li", null, link(r.url, clip(r.title || r.url, 90))); });
        return ["query", "Search for " + claimNo() + ": “" + clip(d.query, 120) + "”, " + (d.error ? "failed" : plural((d.results || []).length, "result", "results")), results.length ? el("ul", null, results) : null];
      case "analysis.source_assessed.v1":
        var s = d.source || {};
        return ["source", "Source for " + claimNo() + ": " + str(s.domain) + " (tier " + num(s.tier) + ") " + stance(s) + " (entail " + prob(s.entail) + ", contradict " + prob(s.contradict) + ")"];
      case "analysis.claim_verdict.v1":
        return ["verdict", "Verdict for " + claimNo() + ": " + labelName(d.label) + ", " + num(d.truth_percent) + "% true, confidence " + num(d.confidence) + (d.gate4 ? ", Gate 4 " + str(d.gate4) : "")];
      case "analysis.post_verdict.v1":
        return ["verdict", "Verdict: " + labelName(d.label) + " (" + str(d.band) + "), " + num(d.truth_percent) + "% true, confidence " + num(d.confidence)];
      case "analysis.completed.v1":
        return ["verdict", "Completed: " + plural(d.claims, "claim", "claims") + ", " + count(d.researched) + " researched"];
      case "analysis.failed.v1":
        return ["failed", "Attempt " + num(d.attempt) + " failed: " + clip(d.reason, 200) + (d.retryable ? " (another attempt follows)" : "")];
    }
    return ["", type];
  }

  // ---- Job view ------------------------------------------------------

  function showJob(id) {
    $("submit-view").hidden = true;
    $("job-view").hidden = false;
    $("new-check").hidden = false;
    $("job-error").hidden = true;
    clear($("timeline"));
    $("live-state").textContent = "";
    $("job-excerpt").hidden = true;
    if (!UUID.test(id)) {
      renderHead(emptyJob(id));
      jobError("This is not the address of an analysis.");
      return;
    }
    id = id.toLowerCase();
    var permalink = location.origin + "/app/analyses/" + id;
    $("permalink").value = permalink;
    $("report-link").href = "/api/v1/analyses/" + id + "/report";
    var state = { id: id, job: null, live: emptyJob(id), folding: false, ended: false, es: null, closed: false, timer: null, events: 0, errors: 0 };
    state.close = function () {
      state.closed = true;
      if (state.es) state.es.close();
      if (state.timer) clearTimeout(state.timer);
    };
    current = state;
    renderAll(emptyJob(id));
    load(state, 0);
  }

  function jobError(message) {
    $("job-error").textContent = message;
    $("job-error").hidden = false;
  }

  // load reads the job; a fresh submission may not be readable for a
  // moment, so a missing job is asked for again a few times.
  function load(state, tries) {
    fetch("/api/v1/analyses/" + state.id, { credentials: "same-origin" }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (data) {
        if (state.closed) return;
        if (res.ok && data && data.id === state.id) {
          if (state.ended && !TERMINAL[data.status] && tries < 30) {
            // The stream has ended the job; the projection follows shortly.
            state.timer = setTimeout(function () { load(state, tries + 1); }, 500);
            return;
          }
          state.job = data;
          if (state.es === null) {
            state.folding = !TERMINAL[data.status];
            renderAll(data);
            openStream(state);
          } else if (TERMINAL[data.status] || !state.ended) {
            renderAll(data);
          }
          return;
        }
        if (res.status === 404 && tries < 10) {
          state.timer = setTimeout(function () { load(state, tries + 1); }, 1000);
          return;
        }
        var err = data && data.error ? data.error : {};
        jobError(res.status === 404 ? "No analysis has this id." : str(err.message) || "The analysis could not be read (HTTP " + res.status + ").");
      });
    }).catch(function () {
      if (!state.closed) jobError("The server could not be reached.");
    });
  }

  function openStream(state) {
    var es = new EventSource("/api/v1/analyses/" + state.id + "/events");
    state.es = es;
    $("live-state").textContent = "· connecting";
    es.onopen = function () { $("live-state").textContent = "· live"; };
    es.onerror = function () {
      if (state.closed) return;
      if (state.job && TERMINAL[state.job.status] && !state.folding && state.events > 0) {
        // A finished job's replay ends where the log ends.
        es.close();
        $("live-state").textContent = "· replayed";
        return;
      }
      if (es.readyState === EventSource.CLOSED || ++state.errors > 5) {
        // The stream is refused (or keeps failing): follow the job by
        // reading it every few seconds instead.
        es.close();
        $("live-state").textContent = "· stream unavailable, refreshing";
        poll(state);
        return;
      }
      $("live-state").textContent = "· reconnecting";
    };
    EVENT_TYPES.forEach(function (type) {
      es.addEventListener(type, function (msg) { onEvent(state, type, msg); });
    });
  }

  // poll reads the job every 3 s until it ends (when there is no stream).
  function poll(state) {
    if (state.closed || (state.job && TERMINAL[state.job.status])) return;
    state.folding = false;
    state.timer = setTimeout(function () {
      load(state, 0);
      poll(state);
    }, 3000);
  }

  function onEvent(state, type, msg) {
    var ev;
    try { ev = JSON.parse(msg.data); } catch (e) { return; }
    if (!ev || typeof ev.data !== "object" || ev.data === null) return;
    state.events++;
    state.errors = 0;
    var d = ev.data;
    fold(state.live, type, ev.time, d);
    if (type === "analysis.requested.v1" && $("job-excerpt").hidden) {
      $("job-excerpt").textContent = clip(d.text, 320);
      $("job-excerpt").hidden = false;
    }
    var line = describe(state.live, type, d);
    var item = el("li", line[0] ? "k-" + line[0] : null, el("span", "dot"),
      el("div", null, el("div", "what", line[1]), line[2] || null, el("div", "when", clock(ev.time))));
    item.dataset.type = type;
    $("timeline").appendChild(item);
    $("timeline").scrollTop = $("timeline").scrollHeight;
    if (state.folding) renderAll(state.live);
    var final = type === "analysis.completed.v1" || (type === "analysis.failed.v1" && !d.retryable);
    if (final) {
      state.es.close();
      $("live-state").textContent = state.folding ? "· finished" : "· replayed";
      state.folding = false;
      state.ended = true;
      load(state, 0); // the projection's job is the record
    }
  }

  // ---- Rendering -----------------------------------------------------

  function renderAll(job) {
    renderHead(job);
    renderVerdict(job);
    renderClaims(job);
    renderMatrix(job);
    renderGates(job);
    renderVersions(job);
  }

  function jobTitle(job) {
    var i = job.input || {};
    if (i.title) return str(i.title);
    if (i.url) return str(i.url);
    if (i.kind === "POST") return str(i.platform) + " post " + str(i.externalId);
    if (i.kind === "URL") return "Submitted page";
    return "Submitted text";
  }

  function renderHead(job) {
    var i = job.input || {};
    $("job-kind").textContent = i.kind === "URL" ? "Web page" : i.kind === "POST" ? "Post" : "Text";
    $("job-title").textContent = jobTitle(job);
    document.title = clip(jobTitle(job), 60) + " · Errata workbench";
    var meta = [];
    if (i.textLength) meta.push(count(i.textLength) + " characters");
    if (job.createdAt) meta.push("requested " + when(job.createdAt));
    if (job.completedAt) meta.push("completed " + when(job.completedAt));
    replace($("job-meta"), meta.join(" · "), i.url && i.title ? [" · ", link(i.url, "open the page")] : null);
    var status = str(job.status) || "PENDING";
    var s = $("job-status");
    s.textContent = { PENDING: "Pending", RUNNING: "Running", COMPLETE: "Complete", FAILED: "Failed" }[status] || status;
    s.className = "status status-" + status.toLowerCase().replace(/[^a-z]/g, "");
  }

  // capLine says what a cap did: lowered the confidence, or bounds it
  // where it already was.
  function capLine(c) {
    return num(c.before) > num(c.cap)
      ? "Lowered from " + num(c.before) + " to " + num(c.cap) + ": " + capText(c.rule)
      : "At most " + num(c.cap) + ": " + capText(c.rule) + " (confidence " + num(c.before) + ", unchanged)";
  }

  function capList(caps) {
    if (!caps || !caps.length) return null;
    return el("ul", "caps", caps.map(function (c) { return el("li", null, capLine(c)); }));
  }

  function figure(value, name) {
    return el("div", "figure", el("span", "value", value), el("span", "name", name));
  }

  function meter(value) {
    var m = document.createElement("meter");
    m.min = 0; m.max = 100; m.low = 43; m.high = 58; m.optimum = 100; m.value = num(value);
    return m;
  }

  function renderVerdict(job) {
    var body = $("verdict-body");
    var v = job.verdict;
    if (!v) {
      if (job.status === "FAILED") {
        replace(body, el("p", "fail", "The analysis failed" + (job.failure ? ": " + job.failure : ".")));
      } else {
        replace(body, el("p", "muted", job.status === "RUNNING" ? "The claims are being checked; the verdict follows." : "The verdict appears here when the claims are judged."));
      }
      return;
    }
    var chips = (v.sources || []).map(function (s) {
      return el("li", "chip", link(s.url, s.domain || s.url), el("span", tierClass(s.tier), "tier " + num(s.tier)),
        s.fromSearch ? el("span", "note", "from search") : null);
    });
    replace(body,
      el("div", "figures",
        el("span", "pill big " + labelClass(v.label), labelName(v.label)),
        el("span", "pill band " + bandClass(v.band), str(v.band))),
      el("div", "figures", figure(num(v.truthPercent) + "%", "truth"), figure(num(v.confidence) + "/100", "confidence")),
      meter(v.truthPercent),
      el("p", "summary", str(v.summary)),
      v.caps && v.caps.length ? [el("h3", null, "Confidence caps"), capList(v.caps)] : null,
      v.caveats && v.caveats.length ? [el("h3", null, "Caveats"), el("ul", "caveats", v.caveats.map(function (c) { return el("li", null, str(c)); }))] : null,
      chips.length ? [el("h3", null, "Sources"), el("ul", "chips", chips)] : null);
  }

  function triageBlock(t) {
    if (!t) return el("p", "muted", "Not triaged yet.");
    var flags = [];
    if (t.timeSensitive) flags.push("time-sensitive");
    if (t.currentEvents) flags.push("current events");
    if (t.numeric) flags.push("numeric");
    return [
      el("p", null, el("span", "badge", str(t.kind)), " specificity " + prob(t.specificity), flags.length ? " · " + flags.join(" · ") : ""),
      el("p", null, el("span", t.researched ? "pass" : "fail", t.researched ? "Researched" : "Not researched"), ": " + str(t.reason))
    ];
  }

  function gate4Block(v) {
    if (!v) return el("p", "muted", "No verdict yet.");
    return [
      v.gate4 ? el("p", null, el("span", "badge " + gateClass(v.gate4), str(v.gate4))) : el("p", "muted", "Not researched: no evidence gate."),
      el("p", null, "Evidence verdict: " + (v.engine ? str(v.engine) : "none") + ", score " + num(v.score))
    ];
  }

  function openDetails() {
    var d = el("details", null, Array.prototype.slice.call(arguments));
    d.open = true;
    return d;
  }

  function renderClaims(job) {
    var body = $("claims-body");
    $("claims-heading").textContent = "Claims (" + job.claims.length + ")";
    if (!job.claims.length) {
      replace(body, el("p", "muted", job.status === "COMPLETE" ? "No claims were found in the text." : "No claims extracted yet."));
      return;
    }
    replace(body, job.claims.map(function (c) {
      var v = c.verdict;
      var queries = (c.queries || []).map(function (q) {
        return el("li", null, "“" + str(q.query) + "” ",
          el("span", "muted small", "(" + str(q.kind) + ", " + (q.error ? "failed: " + str(q.error) : plural(q.results.length, "result", "results")) + ")"),
          q.results.length ? el("ol", "small", q.results.map(function (r) {
            return el("li", null, link(r.url, r.title || r.url), r.publishedAt ? el("span", "muted", " " + str(r.publishedAt)) : null);
          })) : null);
      });
      var sources = (c.sources || []).map(function (s) {
        return el("tr", null, el("td", null, link(s.url, s.domain)), el("td", null, el("span", tierClass(s.tier), String(num(s.tier)))),
          el("td", "s-" + stance(s), stance(s)), el("td", null, prob(s.entail)), el("td", null, prob(s.contradict)), el("td", null, prob(s.neutral)), el("td", null, str(s.origin)));
      });
      return el("article", "claim",
        el("div", "claim-head", el("span", "claim-no", "Claim " + (num(c.index) + 1)),
          v ? [el("span", "pill " + labelClass(v.label), labelName(v.label)), el("span", "pill band " + bandClass(v.band), str(v.band)),
            el("span", "muted", num(v.truthPercent) + "% true · confidence " + num(v.confidence))] : null),
        el("blockquote", null, str(c.text)),
        c.context && c.context !== c.text ? el("p", "muted small", "Context: " + str(c.context)) : null,
        el("div", "gates", el("div", "gate", el("h4", null, "Gate 1 · triage"), triageBlock(c.triage)),
          el("div", "gate", el("h4", null, "Gate 4 · verdict confidence"), gate4Block(v))),
        v && v.summary ? el("p", null, str(v.summary)) : null,
        v ? capList(v.caps) : null,
        queries.length ? openDetails(el("summary", null, "Searches (" + queries.length + ")"), el("ul", null, queries)) : null,
        sources.length ? openDetails(el("summary", null, "Sources assessed (" + sources.length + ")"),
          el("table", null, el("thead", null, el("tr", null, ["Source", "Tier", "Stance", "Entail", "Contradict", "Neutral", "Found by"].map(function (h) { return el("th", null, h); }))),
            el("tbody", null, sources))) : null);
    }));
  }

  function renderMatrix(job) {
    var domains = [], col = {};
    job.claims.forEach(function (c) {
      (c.sources || []).forEach(function (s) {
        if (!Object.prototype.hasOwnProperty.call(col, s.domain)) { col[s.domain] = domains.length; domains.push({ domain: s.domain, tier: s.tier }); }
        var d = domains[col[s.domain]];
        if (s.tier < d.tier) d.tier = s.tier;
      });
    });
    if (!domains.length) {
      replace($("matrix-body"), el("p", "muted", job.status === "COMPLETE" ? "No source was assessed." : "No source assessed yet."));
      return;
    }
    var rows = job.claims.map(function (c) {
      var cells = domains.map(function () { return null; });
      (c.sources || []).forEach(function (s) {
        var i = col[s.domain], strength = Math.max(num(s.entail), num(s.contradict));
        if (cells[i] === null || strength > cells[i].strength) cells[i] = { stance: stance(s), strength: strength };
      });
      return el("tr", null, el("td", null, (num(c.index) + 1) + ". " + clip(c.text, 90)), cells.map(function (cell) {
        return cell ? el("td", "cell s-" + cell.stance, cell.stance) : el("td", "cell muted", "–");
      }));
    });
    replace($("matrix-body"),
      el("div", "matrix", el("table", null,
        el("thead", null, el("tr", null, el("th", null, "Claim"), domains.map(function (d) { return el("th", null, d.domain + " ", el("span", tierClass(d.tier), String(d.tier))); }))),
        el("tbody", null, rows))),
      el("div", "legend", el("span", "s-supports", "supports"), el("span", "s-refutes", "refutes"), el("span", "s-neutral", "neutral"), el("span", "muted", "– not found")));
  }

  function renderGates(job) {
    if (!job.claims.length) {
      replace($("gates-body"), el("p", "muted", "No claims yet."));
      return;
    }
    replace($("gates-body"), el("table", null,
      el("thead", null, el("tr", null, el("th", null, "Claim"), el("th", null, "Gate 1 (triage)"), el("th", null, "Gate 4 (verdict confidence)"))),
      el("tbody", null, job.claims.map(function (c) {
        var t = c.triage, v = c.verdict;
        return el("tr", null, el("td", null, (num(c.index) + 1) + ". " + clip(c.text, 90)),
          el("td", null, t ? [str(t.kind) + ", specificity " + prob(t.specificity) + ": ", el("span", t.researched ? "pass" : "fail", t.researched ? "pass" : "excluded")] : "–"),
          el("td", null, v && v.gate4 ? el("span", "badge " + gateClass(v.gate4), str(v.gate4)) : "–"));
      }))));
  }

  function renderVersions(job) {
    var v = job.versions || {};
    if (!v.model && !(v.prompts || []).length) {
      replace($("versions-body"), el("p", "muted", "Known once the analysis starts."), el("p", "small muted", "Analysis ", el("code", null, job.id)));
      return;
    }
    var row = function (name, value) { return el("tr", null, el("th", null, name), el("td", null, value)); };
    replace($("versions-body"), el("table", null, el("tbody", null,
      (v.prompts || []).map(function (p) { return row("Prompt " + str(p.name), [str(p.version) + " ", el("code", null, "sha256 " + str(p.sha256))]); }),
      row("Provider", str(v.provider)), row("Model", str(v.model)),
      row("Source registry", el("code", null, str(v.registry))), row("Evidence policy", el("code", null, str(v.policy))),
      row("Confidence rubric", el("code", null, str(v.rubric))), row("Analysis", el("code", null, job.id)))));
  }

  // ---- Start -----------------------------------------------------------

  document.addEventListener("DOMContentLoaded", function () {
    $("tab-text").addEventListener("click", function () { setMode("text"); $("text").focus(); });
    $("tab-url").addEventListener("click", function () { setMode("url"); $("url").focus(); });
    $("text").addEventListener("input", updateCount);
    $("submit-form").addEventListener("submit", submit);
    $("copy-permalink").addEventListener("click", function () {
      var input = $("permalink");
      input.select();
      var done = function () { $("copy-permalink").textContent = "Copied"; setTimeout(function () { $("copy-permalink").textContent = "Copy"; }, 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, function () {});
    });
    $("new-check").addEventListener("click", function (ev) { ev.preventDefault(); navigate("/app"); });
    window.addEventListener("popstate", route);
    updateCount();
    route();
  });
})();
