'use strict'

// `httpsys doctor` and `httpsys cert list` from an unelevated prompt, on a binding that
// works (issue 24, defect 3): the certificate's private key was imported elevated into
// the machine store and usually does not open for an unelevated token, while HTTP.SYS
// uses it through LSASS. Neither command may call such a binding broken.
//
// The unelevated prompt is `runas /trustlevel:0x20000` (lib/host.js unelevated): no
// password, no interactive session, and it drops the administrators group whether UAC
// is on or off. A scheduled task with a limited run level needs a logged-on user (or a
// password) and, with UAC off as on hosted runners, still gets a full token.

const assert = require('node:assert/strict')
const path = require('node:path')
const { firstJson } = require('./lib/host')
const { binding } = require('./lib/binding')

module.exports = {
  group: 'unelevated',
  checks: [
    {
      name: 'doctor and cert list from an unelevated prompt report the healthy binding as fine',
      wine: 'Wine has no HTTPS (docs/wine.md 2.9) and no unelevated token: isElevated() is always true there (docs/wine.md 2.8)',
      async run (t) {
        const h = t.host
        const { port, leaf } = await binding(t)
        const prefix = `https://+:${port}/`
        // an unelevated account needs a reservation to register the prefix: doctor checks it
        t.cleanup(`delete the URL reservation ${prefix}`, () => {
          const r = h.httpsysSync(['urlacl', 'delete', prefix])
          if (r.code !== 0) throw new Error(r.output)
        })
        const reserve = await h.httpsys(['urlacl', 'add', prefix])
        assert.equal(reserve.code, 0, reserve.output)
        const config = h.writeConfig('unelevated', {
          backend: 'httpsys',
          apps: [{ name: 'secure', script: path.join(h.APPS, 'host-app.js'), urls: [prefix], env: { HOST_APP_HTTPS: '1' } }]
        })
        const [doctor, list] = await h.unelevated('doctor', [
          ['node', h.BIN, 'doctor', '-c', config, '--json'],
          ['node', h.BIN, 'cert', 'list', '--json']
        ])
        const report = firstJson(doctor.output)
        const elevation = report.findings.find((f) => f.area === 'elevation')
        assert.ok(elevation && /not elevated/.test(elevation.message), `runas /trustlevel:0x20000 did not give an unelevated prompt: ${JSON.stringify(elevation)}`)
        const errors = report.findings.filter((f) => f.level === 'error')
        assert.deepEqual(errors, [], 'doctor found errors on a healthy binding')
        assert.equal(doctor.code, 0, doctor.output)
        assert.equal(list.code, 0, list.output)
        const record = firstJson(list.output).find((r) => r.binding === `0.0.0.0:${port}`)
        assert.ok(record, `cert list does not show 0.0.0.0:${port}`)
        assert.equal(record.thumbprint.toUpperCase(), leaf)
        assert.equal(record.problem, null, `cert list calls the binding broken: ${record.problem}`)
        if (record.keyUnreadable) t.note(`cert list: ${record.keyUnreadable}`)
      }
    }
  ]
}
