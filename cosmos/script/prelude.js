// The server-side API a script sees (docs/cosmos.md, "Server-side
// JavaScript"): getContext(), its collection, request and response, and
// console. It is lapse's own, run once per sandbox; host is the Go side
// (script.go): host.op runs an operation of the collection and returns
// {status, body, message}, host.accepting says whether the script's budget
// still takes operations, host.log keeps a console line.
(function (host) {
  "use strict";
  var queue = [];
  var state = { body: undefined, values: {}, request: undefined, requestValues: {}, operation: "" };

  function opError(r) {
    var e = new Error(r.message);
    e.number = r.status;
    e.body = r.message;
    return e;
  }

  // call runs operation op with args; a callback, when given, is called
  // after the current function returns, as the service calls it.
  function call(op, args, callback) {
    if (callback !== undefined && typeof callback !== "function") {
      throw new Error("The callback must be a function.");
    }
    if (!host.accepting()) {
      return false;
    }
    var r = host.op(op, args);
    var err = r.status >= 400 ? opError(r) : undefined;
    // The result is parsed only for a callback that can see it: one that
    // names it, or reads its arguments (a bulk import's callback takes
    // only err, and parsing each document it wrote would double its cost).
    var res = err || r.body === "" || !wants(callback) ? undefined : JSON.parse(r.body);
    var options = { continuation: undefined, currentCollectionSizeInMB: 0, maxCollectionSizeInMB: 0 };
    if (callback) {
      queue.push(function () { callback.call(collection, err, res, options); });
    } else if (err) {
      throw err;
    }
    return true;
  }

  // wanting keeps wants' answer by the callback's source: a loop makes a
  // new callback each time round, of the same source.
  var wanting = Object.create(null);

  function wants(callback) {
    if (callback === undefined) {
      return false;
    }
    if (callback.length >= 2) {
      return true;
    }
    var src = String(callback);
    var w = wanting[src];
    if (w === undefined) {
      w = /\barguments\b/.test(src);
      wanting[src] = w;
    }
    return w;
  }

  // split sorts the optional options and callback of a call.
  function split(options, callback) {
    if (typeof options === "function") {
      return { options: {}, callback: options };
    }
    return { options: options || {}, callback: callback };
  }

  function query(q) {
    if (typeof q === "string") {
      return { query: q, parameters: [] };
    }
    if (q === null || typeof q !== "object" || typeof q.query !== "string") {
      throw new Error("The query must be a string or an object with a query and parameters.");
    }
    return { query: q.query, parameters: q.parameters || [] };
  }

  var collection = {
    getSelfLink: function () { return host.selfLink; },
    getAltLink: function () { return host.altLink; },
    createDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("create", { link: link, doc: doc, options: a.options }, a.callback);
    },
    upsertDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("upsert", { link: link, doc: doc, options: a.options }, a.callback);
    },
    replaceDocument: function (link, doc, options, callback) {
      var a = split(options, callback);
      return call("replace", { link: link, doc: doc, options: a.options }, a.callback);
    },
    readDocument: function (link, options, callback) {
      var a = split(options, callback);
      return call("read", { link: link, options: a.options }, a.callback);
    },
    deleteDocument: function (link, options, callback) {
      var a = split(options, callback);
      return call("delete", { link: link, options: a.options }, a.callback);
    },
    readDocuments: function (link, options, callback) {
      var a = split(options, callback);
      return call("query", { link: link, query: { query: "SELECT * FROM root", parameters: [] }, options: a.options }, a.callback);
    },
    queryDocuments: function (link, q, options, callback) {
      var a = split(options, callback);
      return call("query", { link: link, query: query(q), options: a.options }, a.callback);
    }
  };

  var response = {
    getBody: function () { return state.body; },
    setBody: function (v) { state.body = v; },
    appendBody: function (v) { state.body = (state.body === undefined ? "" : state.body) + v; },
    getValue: function (name) { return name === "Body" ? state.body : state.values[name]; },
    setValue: function (name, v) { if (name === "Body") { state.body = v; } else { state.values[name] = v; } },
    appendValue: function (name, v) {
      if (name === "Body") { response.appendBody(v); return; }
      state.values[name] = (state.values[name] === undefined ? "" : state.values[name]) + v;
    },
    getMaxResponseBodySize: function () { return host.maxBodySize; },
    getCurrentResponseBodySize: function () { return state.body === undefined ? 0 : JSON.stringify(state.body).length; }
  };

  var request = {
    getBody: function () { return state.request; },
    setBody: function (v) { state.request = v; },
    getValue: function (name) { return name === "Body" ? state.request : state.requestValues[name]; },
    setValue: function (name, v) { if (name === "Body") { state.request = v; } else { state.requestValues[name] = v; } },
    getOperationType: function () { return state.operation; }
  };

  var context = {
    getCollection: function () { return collection; },
    getRequest: function () { return request; },
    getResponse: function () { return response; }
  };

  function format(args) {
    var out = "";
    var rest = 0;
    if (typeof args[0] === "string") {
      var i = 1;
      out = args[0].replace(/%[sdifjoO%]/g, function (m) {
        if (m === "%%") { return "%"; }
        if (i >= args.length) { return m; }
        var v = args[i++];
        switch (m) {
          case "%d": case "%i": return String(parseInt(v, 10));
          case "%f": return String(parseFloat(v));
          case "%j": case "%o": case "%O": return JSON.stringify(v);
        }
        return String(v);
      });
      rest = i;
    }
    for (var j = rest; j < args.length; j++) {
      var v = args[j];
      out += (out === "" && j === 0 ? "" : " ") + (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
    }
    return out;
  }

  return {
    getContext: function () { return context; },
    console: { log: function () { host.log(format(Array.prototype.slice.call(arguments))); } },
    // start sets what a trigger sees of its request and response.
    start: function (operation, requestBody, responseBody) {
      state.operation = operation;
      state.request = requestBody;
      state.body = responseBody;
    },
    // drain runs the callbacks queued, and those they queue, in order.
    drain: function () {
      while (queue.length > 0) {
        queue.shift()();
      }
    },
    // result returns the response's body and the request's, which
    // script.go writes as JSON.
    result: function () {
      return { body: state.body, request: state.request };
    }
  };
})
