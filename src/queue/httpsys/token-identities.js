'use strict'

// The access tokens of an HTTP.SYS attachment's requests (native/src/token.h): each
// authenticated request's token becomes that request's WindowsIdentity, and goes back
// to the addon (closeToken) when the request ends, whoever ended it: its response sent,
// the client gone, the app's cancel, a refusal before the app saw it, or the queue's
// end. The addon hands out a number, never a handle: a number it no longer holds
// answers ERROR_INVALID_HANDLE (6), so a late read fails cleanly instead of reaching
// another handle.

const { codes } = require('../../errors')
const { WindowsIdentity, release } = require('../windows-identity')

const ERROR_INVALID_HANDLE = 6

class TokenIdentities {
  /**
   * @param {object} native the addon's Queue (tokenUser, tokenGroups, closeToken)
   * @param {(sid: string) => string|null} lookupSid DOMAIN\name of a SID
   */
  constructor (native, lookupSid) {
    this.native = native
    this.lookupSid = lookupSid
    this.byId = new Map() // request id -> identity, while the request is in flight
  }

  /** Requests whose token is still open. */
  get size () { return this.byId.size }

  /**
   * The identity of a request HTTP.SYS authenticated (req.auth.status 'success', with a
   * token), else null. Its token is held until release(req.id).
   */
  identify (req) {
    const auth = req.auth
    if (!auth || !(auth.token > 0)) return null
    const native = this.native
    const token = auth.token
    if (auth.status !== 'success') {
      // HTTP.SYS hands no token then (token.cc keeps none): one here is closed unread
      native.closeToken(token)
      return null
    }
    const read = (call) => {
      const r = native[call](token)
      if (r && r.code === 0) return r
      if (!r || r.code === ERROR_INVALID_HANDLE) return undefined
      throw new codes.ERR_HTTPSYS_NATIVE_CALL({ syscall: 'GetTokenInformation', win32: r.code })
    }
    const identity = new WindowsIdentity({
      scheme: auth.scheme,
      readUser: () => read('tokenUser')?.sid,
      readGroups: () => read('tokenGroups')?.groups,
      lookupSid: this.lookupSid,
      close: () => native.closeToken(token)
    })
    this.byId.set(req.id, identity)
    return identity
  }

  /** The request ended: its identity keeps what the app read, its token goes. */
  release (id) {
    const identity = this.byId.get(id)
    if (identity === undefined) return
    this.byId.delete(id)
    release(identity)
  }

  releaseAll () {
    for (const id of [...this.byId.keys()]) this.release(id)
  }
}

module.exports = { TokenIdentities }
