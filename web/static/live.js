// refine console: refresh a running session's page. The page works without
// this script (it then reloads itself every 2 seconds through <noscript>).
(function () {
  "use strict";
  var el = document.getElementById("session");
  if (!el || el.dataset.poll !== "true") {
    return;
  }
  var url = "/api/sessions/" + encodeURIComponent(el.dataset.session) + "/live";
  var token = el.dataset.token;
  var activity = document.getElementById("activity");
  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (live) {
        if (!live) {
          setTimeout(poll, 3000);
          return;
        }
        if (live.token !== token) {
          window.location.reload();
          return;
        }
        if (activity && live.activity) {
          activity.textContent = live.activity;
        }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 3000); });
  }
  setTimeout(poll, 500);
})();
