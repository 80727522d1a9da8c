'use strict'

// `httpsys urlacl add|list|delete` against the machine's real reservation store
// (docs/http-sys.md 3; test/windows/README.md, manual check 22). The reservation is for Everyone by
// SID (S-1-1-0: the same on every language of Windows) on a prefix no one else uses,
// and is deleted again whatever happens.

const assert = require('node:assert/strict')
const { firstJson, need } = require('./lib/host')

const NOTHING_STORED = 'Wine\'s HTTP.SYS stores no reservation (docs/wine.md 2.8): a query finds nothing'
const SDDL = 'D:(A;;GX;;;S-1-1-0)'

module.exports = {
  group: 'urlacl',
  checks: [
    {
      name: 'urlacl add reserves a prefix for Everyone (listen)',
      async run (t) {
        const h = t.host
        const prefix = `http://+:${await h.freePort()}/httpsys-host-${process.pid}/`
        // registered first: a reservation made by a run that then failed must not stay
        t.cleanupAfterGroup(`delete the URL reservation ${prefix}`, () => {
          const r = h.httpsysSync(['urlacl', 'delete', prefix])
          if (r.code !== 0) throw new Error(r.output)
        })
        const r = await h.httpsys(['urlacl', 'add', prefix, '--sddl', SDDL])
        assert.equal(r.code, 0, r.output)
        // "Everyone" is translated on other languages of Windows ("Jeder")
        assert.match(r.stdout, new RegExp(`^reserved ${escape(prefix)} for .+ \\(listen\\)$`, 'm'))
        t.shared.prefix = prefix
      }
    },
    {
      name: 'urlacl list shows it with its SDDL; adding it again changes nothing',
      wine: NOTHING_STORED,
      async run (t) {
        const h = t.host
        const prefix = need(t.shared.prefix, 'the reservation of the first urlacl check')
        const list = await h.httpsys(['urlacl', 'list', '--json'])
        assert.equal(list.code, 0, list.output)
        const found = firstJson(list.stdout).find((x) => x.prefix.toLowerCase() === prefix.toLowerCase())
        assert.ok(found, `urlacl list does not show ${prefix}`)
        // HTTP.SYS may hand the SID back as its SDDL alias (WD: Everyone)
        assert.match(found.sddl, /\(A;;GX;;;(S-1-1-0|WD)\)/)
        // netsh reads the same store: what httpsys wrote is what Windows holds
        const netsh = await h.run('netsh', ['http', 'show', 'urlacl', `url=${prefix}`])
        assert.match(netsh.output, /\(A;;GX;;;(S-1-1-0|WD)\)/, netsh.output)
        const again = await h.httpsys(['urlacl', 'add', prefix, '--sddl', SDDL])
        assert.equal(again.code, 0, again.output)
        assert.match(again.stdout, /is already reserved for .*: nothing changed/)
      }
    },
    {
      name: 'urlacl delete removes it; a second delete finds nothing to delete',
      async run (t) {
        const h = t.host
        const prefix = need(t.shared.prefix, 'the reservation of the first urlacl check')
        const del = await h.httpsys(['urlacl', 'delete', prefix])
        assert.equal(del.code, 0, del.output)
        if (t.wine) {
          // Wine's delete answers 0 for anything (docs/wine.md 2.8): only that it ran
          assert.match(del.stdout, /deleted the reservation of|is not reserved/)
          return
        }
        assert.match(del.stdout, new RegExp(`^deleted the reservation of ${escape(prefix)}$`, 'm'))
        const again = await h.httpsys(['urlacl', 'delete', prefix])
        assert.equal(again.code, 0, again.output)
        assert.match(again.stdout, /is not reserved: nothing to delete/)
        const list = await h.httpsys(['urlacl', 'list', '--json'])
        assert.ok(!firstJson(list.stdout).some((x) => x.prefix.toLowerCase() === prefix.toLowerCase()), 'still listed after the delete')
      }
    }
  ]
}

function escape (text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
