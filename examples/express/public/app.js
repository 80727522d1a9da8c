'use strict'
/* global document, fetch */

fetch('/whoami')
  .then((r) => r.json())
  .then((me) => {
    document.getElementById('who').textContent =
      (me.user ? `Hello ${me.user}` : 'Not logged in') +
      ` - visit ${me.visits}, served by pid ${me.pid}` +
      (me.instance !== null ? ` (instance ${me.instance})` : '')
  })
