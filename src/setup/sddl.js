'use strict'

// The small part of SDDL (Security Descriptor Definition Language) a URL reservation
// uses: a DACL of allow entries, `D:(A;;GX;;;S-1-5-21-...)`, where GX lets the account
// register the prefix (listen) and GW lets it delegate sub-prefixes to others.
// https://learn.microsoft.com/windows/win32/secauthz/ace-strings
// https://learn.microsoft.com/windows/win32/http/add-urlacl (the rights a reservation uses)

// The SID strings SDDL abbreviates (the ones reservations use in practice).
const ALIASES = {
  WD: 'S-1-1-0', // Everyone
  AU: 'S-1-5-11', // Authenticated Users
  IU: 'S-1-5-4', // Interactive
  NS: 'S-1-5-20', // Network Service
  LS: 'S-1-5-19', // Local Service
  SY: 'S-1-5-18', // Local System
  BA: 'S-1-5-32-544', // Administrators
  BU: 'S-1-5-32-545' // Users
}

/**
 * @param {string} sddl
 * @returns {{sid: string, rights: string[]}[]|null} the allow entries, or null when this
 *   is not a DACL of allow entries
 */
function parseSddl (sddl) {
  const m = /^D:(?:[A-Z]*)((?:\([^()]*\))+)$/i.exec(String(sddl || '').trim())
  if (!m) return null
  const out = []
  for (const ace of m[1].slice(1, -1).split(')(')) {
    const [type, , rights, , , sid] = ace.split(';')
    if (type === undefined || sid === undefined || type.toUpperCase() !== 'A') return null
    const who = ALIASES[sid.toUpperCase()] || sid.toUpperCase()
    if (!/^S-1(-\d+)+$/.test(who)) return null
    out.push({ sid: who, rights: rightsOf(rights.toUpperCase()) })
  }
  return out
}

function rightsOf (text) {
  if (text.includes('GA')) return ['listen', 'delegate']
  const out = []
  if (text.includes('GX')) out.push('listen')
  if (text.includes('GW')) out.push('delegate')
  return out
}

/** The descriptor that lets one SID listen on a prefix. */
function listenSddl (sid) {
  return `D:(A;;GX;;;${sid})`
}

/** Whether two descriptors grant the same rights to the same SIDs (order aside). */
function sameAccess (a, b) {
  const pa = parseSddl(a)
  const pb = parseSddl(b)
  if (pa === null || pb === null) return String(a).trim().toUpperCase() === String(b).trim().toUpperCase()
  const key = (list) => list.map((e) => `${e.sid}:${[...e.rights].sort().join('+')}`).sort().join(',')
  return key(pa) === key(pb)
}

module.exports = { parseSddl, listenSddl, sameAccess, ALIASES }
