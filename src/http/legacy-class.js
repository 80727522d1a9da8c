'use strict'

// node's http classes are plain constructor functions, and code in the wild relies on
// it: `http.Server(app)` without `new` (socket.io's examples), and libraries written
// with util.inherits that call `http.ServerResponse.call(this, req)`. An ES class
// throws on both. So the constructors here are functions, and their members are
// declared in a class body (readable, and `super.x()` keeps working) that is copied
// onto the function's prototype.

/**
 * @param {Function} ctor the constructor function
 * @param {Function} Base what ctor extends
 * @param {Function} members a class extending Base; only its prototype members are used
 * @returns {Function} ctor
 */
function defineLegacyClass (ctor, Base, members) {
  Object.setPrototypeOf(ctor.prototype, Base.prototype)
  Object.setPrototypeOf(ctor, Base)
  const proto = members.prototype
  for (const key of Reflect.ownKeys(proto)) {
    if (key === 'constructor') continue
    Object.defineProperty(ctor.prototype, key, Object.getOwnPropertyDescriptor(proto, key))
  }
  return ctor
}

module.exports = { defineLegacyClass }
