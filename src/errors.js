'use strict'

// Every error httpsys throws, with a stable `code`.
//
// Two families live here:
// - node's own codes for the http layer (ERR_HTTP_HEADERS_SENT, ...), so apps that
//   test `err.code` behave as they do on node's http module;
// - ERR_HTTPSYS_* for everything else. Their messages say what happened and the exact
//   next step. test/unit/errors.test.js keeps the README's error table in step.
//
// Usage: `throw new codes.ERR_HTTPSYS_PORT_IN_USE({ port: 8080, owner: 'pid 42 (nginx)' })`.
// The details object is copied onto the error (err.port, err.owner, ...), except the
// keys Error itself owns (name, message, stack, code, cause).

const codes = Object.create(null)
// detail keys used only by the message: they would shadow Error's own properties
const RESERVED = new Set(['cause', 'message', 'name', 'stack', 'code'])

/**
 * @param {string} code stable identifier
 * @param {(d: object) => string} message builds the message from the details
 * @param {ErrorConstructor} [Base=Error]
 */
function define (code, message, Base = Error) {
  class HttpsysCodedError extends Base {
    constructor (details = {}) {
      const d = typeof details === 'object' && details !== null ? details : { value: details }
      super(message(d), d.cause ? { cause: d.cause } : undefined)
      for (const key of Object.keys(d)) {
        if (!RESERVED.has(key)) this[key] = d[key]
      }
      this.code = code
      // node's errors: `name` is the base class's ('TypeError'), and the code shows in
      // the stack's first line and in toString() ("TypeError [ERR_X]: ..."). The stack
      // is formatted with the name it sees on first access: a name of its own for that
      // moment, then the class's again.
      Object.defineProperty(this, 'name', { value: `${Base.name} [${code}]`, configurable: true, writable: true })
      this.stack // eslint-disable-line no-unused-expressions
      delete this.name
    }

    toString () { return `${this.name} [${code}]: ${this.message}` }
  }
  Object.defineProperty(HttpsysCodedError, 'name', { value: code })
  codes[code] = HttpsysCodedError
}

const str = (v) => typeof v === 'string' ? JSON.stringify(v) : String(v)

// How node's messages name a value they did not want ("Received null", "Received an
// instance of Object", "Received type number (42)"), so apps and tests comparing
// messages see node's words.
function specificType (value) {
  if (value === null || value === undefined) return String(value)
  if (typeof value === 'function') return `function ${value.name}`
  const { inspect } = require('node:util')
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) return `an instance of ${value.constructor.name}`
    return inspect(value, { depth: -1 })
  }
  let text = inspect(value, { colors: false })
  if (text.length > 28) text = `${text.slice(0, 25)}...`
  return `type ${typeof value} (${text})`
}

// ---------------------------------------------------------------------------
// node-compatible codes (src/http). Messages follow node's wording.

define('ERR_HTTP_HEADERS_SENT', (d) => `Cannot ${d.action || 'set'} headers after they are sent to the client`)
define('ERR_HTTP_SOCKET_ASSIGNED', () => 'ServerResponse has an already assigned socket')
define('ERR_STREAM_WRITE_AFTER_END', () => 'write after end')
define('ERR_STREAM_DESTROYED', (d) => `Cannot call ${d.method || 'write'} after a stream was destroyed`)
define('ERR_STREAM_ALREADY_FINISHED', (d) => `Cannot call ${d.method || 'end'} after a stream was finished`)
define('ERR_STREAM_NULL_VALUES', () => 'May not write null values to stream', TypeError)
define('ERR_STREAM_CANNOT_PIPE', () => 'Cannot pipe, not readable')
define('ERR_INVALID_ARG_TYPE', (d) => `The "${d.name}" ${String(d.name).includes('.') ? 'property' : 'argument'} must be ${d.expected}. Received ${specificType(d.actual)}`, TypeError)
define('ERR_OUT_OF_RANGE', (d) => `The value of "${d.name}" is out of range. It must be ${d.range}. Received ${d.received}`, RangeError)
define('ERR_INVALID_ARG_VALUE', (d) => {
  let inspected = require('node:util').inspect(d.value)
  if (inspected.length > 128) inspected = `${inspected.slice(0, 128)}...`
  return `The ${String(d.name).includes('.') ? 'property' : 'argument'} '${d.name}' ${d.reason || 'is invalid'}. Received ${inspected}`
}, TypeError)
define('ERR_HTTP_INVALID_STATUS_CODE', (d) => require('node:util').format('Invalid status code: %s', d.value), RangeError)
define('ERR_INVALID_HTTP_TOKEN', (d) => `${d.label || 'Header name'} must be a valid HTTP token ["${d.value}"]`, TypeError)
define('ERR_HTTP_INVALID_HEADER_VALUE', (d) => `Invalid value "${d.value}" for header "${d.header}"`, TypeError)
define('ERR_INVALID_CHAR', (d) => `Invalid character in ${d.field || 'header content'}${d.header ? ` ["${d.header}"]` : ''}`, TypeError)
define('ERR_HTTP_CONTENT_LENGTH_MISMATCH', (d) => `Response body's content-length of ${d.actual} byte(s) does not match the content-length of ${d.expected} byte(s) set in header`)
define('ERR_HTTP_TRAILER_INVALID', () => 'Trailers are invalid with this transfer encoding')
define('ERR_HTTP_BODY_NOT_ALLOWED', () => 'Adding content for this request method or response status is not allowed.')
define('ERR_SERVER_ALREADY_LISTEN', () => 'Listen method has been called more than once without closing.')
define('ERR_SERVER_NOT_RUNNING', () => 'Server is not running.')
define('ERR_METHOD_NOT_IMPLEMENTED', (d) => `The ${d.method} method is not implemented`)
define('ERR_SOCKET_BAD_PORT', (d) => `${d.name || 'Port'} should be >= 0 and < 65536. Received ${str(d.value)}.`, RangeError)
define('ECONNRESET', () => 'aborted')

// ---------------------------------------------------------------------------
// URL prefixes (src/urlprefix.js)

define('ERR_HTTPSYS_BAD_PREFIX', (d) =>
  `Invalid URL prefix ${str(d.prefix)}: ${d.reason}. ` +
  'A prefix reads scheme://host:port/path/ (scheme http or https, a port, a path ending in /), ' +
  'for example http://+:8080/api/.', TypeError)
define('ERR_HTTPSYS_URL_CONFLICT', (d) =>
  `The URL prefix ${d.prefix} is already registered${d.owner ? ` by ${d.owner}` : ''}. ` +
  'Stop the other owner or choose another prefix (another path, or another port).')
define('ERR_HTTPSYS_LISTEN_PATH', (d) =>
  `Cannot listen on the path ${str(d.path)}: HTTP.SYS routes requests to a request queue by URL prefix, and cannot listen on a pipe or socket path. ` +
  'Listen on a port (server.listen(8080)) or a URL prefix (server.listen(\'http://+:8080/\')), or start the app with `httpsys start` and give it `urls` in httpsys.config.js.')
define('ERR_HTTPSYS_LISTEN_PATH_BIND', (d) =>
  `Cannot listen on the path ${str(d.path)}: the native router's socket is bound through a private folder in the temp folder ${str(d.tmp)}, which cannot be made there, and the name does not fit a socket address in its own folder. ` +
  'Set TMPDIR to a writable folder with a short path, or listen on a port.')
// a listen() no router of a standalone process serves (the in-process JS hub that did was removed, issue 25)
define('ERR_HTTPSYS_LISTEN_UNSERVED', (d) =>
  `Cannot listen on ${str(d.target)}: a standalone app's native router does not serve ${d.what}. ` +
  'Listen on one port or URL prefix (server.listen(8080)), or start the app with `httpsys start` and give it `urls` in httpsys.config.js.')
define('ERR_HTTPSYS_SOCKET_WRITE', (d) =>
  `Cannot write to req.socket: ${d.reason}. ` +
  'The router owns the connection: answer through res, or write one whole HTTP/1.1 response (status line, headers, a blank line, the body) to the socket of a request whose response has not begun.')

// ---------------------------------------------------------------------------
// The router: ports and queues (router/, src/queue)

define('ERR_HTTPSYS_PORT_IN_USE', (d) =>
  `Port ${d.port}${d.host ? ` on ${d.host}` : ''} is already in use${d.owner ? ` by ${d.owner}` : ''}. ` +
  (d.win32 !== undefined
    ? `Another program (not HTTP.SYS) holds it: stop it or choose another port (\`netstat -ano | findstr :${d.port}\` shows its pid).`
    : /httpsys supervisor/.test(d.owner || '')
      ? 'Several apps share a port by URL prefix under one supervisor: put both apps in one httpsys.config.js (`urls` per app), or use another port.'
      : `Stop that process or choose another port (on Linux \`ss -ltnp 'sport = :${d.port}'\` shows the owner).`))
define('ERR_HTTPSYS_ACCESS_DENIED', (d) => d.win32 !== undefined
  ? `HTTP.SYS denied ${d.user || 'this account'} the URL prefix ${d.prefix}: it needs a URL reservation (or Administrator rights). ` +
    `Run once in an elevated prompt: \`httpsys urlacl add ${d.prefix} --user ${d.user || 'DOMAIN\\user'}\`.`
  : `Not allowed to listen on port ${d.port}${d.host ? ` on ${d.host}` : ''}: ports below 1024 need privileges. ` +
  'Use a port >= 1024, run as root, or grant node the right once: ' +
  `\`sudo setcap 'cap_net_bind_service=+ep' ${d.execPath || process.execPath}\`.`)
define('ERR_HTTPSYS_ADDRESS_UNAVAILABLE', (d) =>
  `Cannot listen on ${d.host} port ${d.port}: this machine has no such address. ` +
  'Listen on an address of one of its interfaces (`ip -brief address` lists them), on 127.0.0.1 for this machine only, or on every address (no host, or `+` in a URL prefix).')
define('ERR_HTTPSYS_QUEUE_NOT_FOUND', (d) =>
  `No request queue named ${str(d.queue)} exists on the router. ` +
  'Start the app through `httpsys start` (which creates its queue) or give the server a URL prefix to listen on.')
define('ERR_HTTPSYS_HUB_UNREACHABLE', (d) =>
  `Cannot reach the httpsys router at ${d.path}${d.cause ? ` (${d.cause.code || d.cause.message})` : ''}. ` +
  'The supervisor that started this process has stopped; start the app again with `httpsys start`.')
define('ERR_HTTPSYS_PROTOCOL', (d) =>
  `The httpsys router and a worker could not understand each other: ${d.reason}. ` +
  'A version mismatch: run workers with the same httpsys install as the supervisor (`npm install`). ' +
  'A malformed frame: the worker was dropped; report it as a bug with this message.')
define('ERR_HTTPSYS_QUEUE_CLOSED', (d) =>
  `The request queue ${d.queue ? str(d.queue) + ' ' : ''}was closed by the router.`)
define('ERR_HTTPSYS_HTTP_PARSE', (d) =>
  `A client sent a request the router cannot accept (${d.status}: ${d.reason}); the router answers ${d.status} and closes the connection. ` +
  'Fix the client, or raise the router\'s header/body size limits in the config if the request was legitimate.')
define('ERR_HTTPSYS_ATTACH_DENIED', (d) =>
  `The router refused a worker${d.pid ? ` (pid ${d.pid})` : ''} for the queue ${str(d.queue)}: ${d.reason}. ` +
  'Workers attach through `httpsys start`, which gives each app\'s workers their queue and token; every instance of an app must listen on the same prefix.')
define('ERR_HTTPSYS_QUEUE_EXISTS', (d) =>
  `A request queue named ${str(d.queue)} already exists on the router. Choose another name, or attach to it instead of creating it.`)
define('ERR_HTTPSYS_METRICS_LISTEN', (d) =>
  `Cannot serve metrics on ${d.host}:${d.port}: ${d.reason === 'EADDRINUSE' ? 'the port is in use' : d.reason === 'EACCES' ? 'not allowed to listen there' : d.reason}. ` +
  'Choose another metrics.listen (or --metrics), for example 127.0.0.1:9464, or stop what holds the port.')
// src/supervisor/router-binary.js: every place looked in, and the fix for where httpsys runs from
define('ERR_HTTPSYS_ROUTER_MISSING', (d) =>
  `The native router cannot be found. Tried: ${(d.attempts || []).map((a) => `${a.path}: ${a.error}`).join('; ') || 'nothing'}. ` +
  `${d.fix || 'Build it with `npm run build:router` (Go 1.24 or later), or set HTTPSYS_ROUTER_PATH to a built httpsys-router'}.`)
define('ERR_HTTPSYS_ROUTER_FAILED', (d) =>
  `The native router failed: ${d.reason}. ` +
  'Its records in the log say why; report it with those records.')
define('ERR_HTTPSYS_NATIVE_UNAVAILABLE', (d) =>
  `The HTTP.SYS addon cannot be loaded${d.reason ? ` (${d.reason})` : ''}. Tried: ${(d.attempts || []).map((a) => `${a.path}: ${a.error}`).join('; ') || 'nothing'}. ` +
  'Build it with `npm run build:win` (Linux, mingw-w64) or `npx node-gyp rebuild` (Windows), set HTTPSYS_NATIVE_PATH to a built httpsys_native.node, or use `--backend hub`.')
define('ERR_HTTPSYS_NODE_UNUSABLE', (d) =>
  `Cannot run the apps with node ${d.node}: ${d.reason}. ` +
  'Give `--node` (or the app\'s `node` key) the path of node 20 or later, or `self` for the node httpsys runs on (inside the single executable: its own).')
define('ERR_HTTPSYS_NATIVE_CALL', (d) =>
  `HTTP.SYS call ${d.syscall} failed with ${d.win32Name || 'Win32 error'} (${d.win32})${d.prefix ? ` for ${d.prefix}` : ''}${d.queue ? ` on queue ${str(d.queue)}` : ''}. ` +
  'Run `httpsys doctor` to check the HTTP service, URL reservations and certificate bindings.')
define('ERR_HTTPSYS_TLS_CERT', (d) =>
  `Cannot use the TLS certificate ${d.file}${d.port ? ` (port ${d.port}${d.host ? `, host ${d.host}` : ''})` : ''}: ${d.reason}. ` +
  (d.fromApp
    ? 'Fix the key and cert (or pfx and passphrase) the app passes to https.createServer(), or give the port a tls entry in httpsys.config.js (it wins over the app\'s).'
    : 'Give a PEM certificate (cert) with its PEM private key (key), or a .pfx (pfx) with its passphrase, valid today and matching each other ' +
      '(`openssl x509 -in <cert> -noout -subject -dates` shows what a certificate says).'))
define('ERR_HTTPSYS_CLIENT_CERT_BINDING', (d) =>
  `${d.where} asks clients for a certificate (requestCert), ` +
  (d.reason
    ? `and the certificate bindings could not be checked (${d.reason}), so it is not served rather than let a client without one through. `
    : `and the certificate binding of ${d.bindings.join(', ')} does not have HTTP.SYS ask clients for one: they would reach the app without being asked. `) +
  (d.commands && d.commands.length > 0
    ? `Make the binding ask (elevated, once): ${d.commands.map((c) => `\`${c}\``).join(', ')}. Every app served on that binding is then asked for a certificate. `
    : '') +
  'Or serve it with the native router (backend: \'hub\'), or remove requestCert.')
// Windows authentication (README "Windows authentication", src/windows-auth.js)
define('ERR_HTTPSYS_AUTH_UNAVAILABLE', (d) =>
  `App ${str(d.app)} asks for Windows authentication (auth: ${(d.schemes || []).join(', ')}), which only HTTP.SYS does, ` +
  `and it would run on ${d.router || 'the native router'}${d.reason ? ` (${d.reason})` : ''}: there is no Windows logon there, so no request could be authenticated. ` +
  (d.fix ||
    'Run it on Windows with HTTP.SYS; or, to develop on this machine, give it a development identity: auth.dev_identity: { user: \'DEV\\\\alice\' } ' +
    '(or HTTPSYS_DEV_IDENTITY=DEV\\alice): every request then carries that identity, which is not authentication.'))
define('ERR_HTTPSYS_AUTH_TOKEN_CLOSED', (d) =>
  `req.windowsIdentity.${d.what || 'sid'} was first read after its request ended: HTTP.SYS's access token is valid only while the request is in flight, and it is closed once the response is sent. ` +
  'Read the identity in the request handler (or its \'finish\' and \'close\' listeners), or keep what you need from it (identity.toJSON()).')
define('ERR_HTTPSYS_TLS_NO_CERT', (d) =>
  `The https prefix ${d.prefix} has no certificate: the config's tls has no entry for port ${d.port}${d.host ? ` (or host ${d.host})` : ''} and the app passed none. ` +
  `Add one to httpsys.config.js (tls: [{ port: ${d.port}, cert: './site.crt', key: './site.key' }]), or pass key and cert to https.createServer(options).`)

// ---------------------------------------------------------------------------
// Windows setup: URL reservations, certificate bindings, doctor (src/setup)

define('ERR_HTTPSYS_NOT_ELEVATED', (d) =>
  `${d.what || 'This change'} needs Administrator rights: ${d.by || 'HTTP.SYS'} answered ${d.syscall || 'the call'} with ERROR_ACCESS_DENIED (5). ` +
  `Open an elevated prompt (right-click Terminal > Run as administrator) and run${d.command ? `: \`${d.command}\`` : ' the command again'}.`)
define('ERR_HTTPSYS_URLACL_CONFLICT', (d) =>
  `The URL prefix ${d.prefix} is already reserved for ${d.owners || 'another account'}${d.sddl ? ` (${d.sddl})` : ''}. ` +
  `To give it to ${d.user || 'this account'} instead, run elevated: \`httpsys urlacl delete ${d.prefix}\`, then \`httpsys urlacl add ${d.prefix}${d.user ? ` --user ${d.user}` : ''}\`.`)
define('ERR_HTTPSYS_ACCOUNT_UNKNOWN', (d) =>
  `Windows knows no account named ${str(d.account)} (${d.win32Name || 'ERROR_NONE_MAPPED'}, ${d.win32 || 1332}). ` +
  'Give DOMAIN\\user or a SID (`whoami /user` prints yours); group names such as Everyone or Users are translated on non-English Windows, ' +
  'so use their SID: --sddl "D:(A;;GX;;;S-1-1-0)" is Everyone.')
define('ERR_HTTPSYS_CERT_UNUSABLE', (d) =>
  `HTTP.SYS cannot use the certificate ${d.thumbprint} for ${d.binding}: ${d.reason || 'it is not in LocalMachine\\' + (d.store || 'My') + ', or it has no private key, or its key cannot be used (ERROR_NO_SUCH_LOGON_SESSION, 1312)'}. ` +
  `Import it with its private key (\`httpsys cert add --port ${d.port || 443} --pfx site.pfx\`), or see \`httpsys doctor\`.`)
define('ERR_HTTPSYS_CERT_FILE', (d) =>
  `Cannot use the certificate file ${d.file}: ${d.reason}. ` +
  'Give a .pfx with its --passphrase, or a PEM certificate (--cert) with its PEM private key (--key).')
define('ERR_HTTPSYS_SETUP_REQUIRED', (d) =>
  `${d.count} URL reservation${d.count === 1 ? '' : 's'} or certificate binding${d.count === 1 ? ' is' : 's are'} missing and this prompt is not elevated, so nothing was started. ` +
  'Run the commands above once from an elevated prompt (or `httpsys start --setup` there), then start again.')

// ---------------------------------------------------------------------------
// Configuration and the CLI (src/config, src/cli, src/supervisor)

define('ERR_HTTPSYS_CONFIG_NOT_FOUND', (d) =>
  `No config file at ${d.path}. Pass a script (\`httpsys start app.js\`) or a config file (\`httpsys start -c httpsys.config.js\`).`)
define('ERR_HTTPSYS_CONFIG_LOAD', (d) =>
  `Cannot load the config file ${d.path}: ${d.cause ? d.cause.message : 'unknown error'}. ` +
  'Check it with `node ' + (d.path || 'httpsys.config.js') + '`; it must export { apps: [...] }.')
define('ERR_HTTPSYS_CONFIG_INVALID', (d) =>
  // a command-line flag is named as typed (--url), a config key by its path
  `Invalid ${/^--/.test(d.key) ? d.key : `config at ${d.key}`}: ${d.reason}.${d.fix ? ' ' + d.fix : ''}` +
  (d.more && d.more.length
    ? `\nAlso (${d.more.length} more):` + d.more.map((p) => `\n  at ${p.key}: ${p.reason}.${p.fix ? ' ' + p.fix : ''}`).join('')
    : ''), TypeError)
define('ERR_HTTPSYS_CONFIG_EXISTS', (d) =>
  `${d.path} exists already: httpsys init left it as it is. Edit it (\`httpsys config check\` validates it), ` +
  'or replace it with the template: `httpsys init --force`.')
define('ERR_HTTPSYS_CONFIG_TIMEOUT', (d) =>
  `The config file ${d.path} did not finish loading within ${d.timeout}: ${d.what || 'what it exports'} has not settled. ` +
  'Make it resolve to { apps: [...] } (give what it awaits, a secret store or a network call, a timeout of its own), ' +
  'or, if it needs longer, allow more with HTTPSYS_CONFIG_TIMEOUT (e.g. `HTTPSYS_CONFIG_TIMEOUT=30s`).')
define('ERR_HTTPSYS_LOG_FILE_UNSAFE', (d) =>
  `Refusing to write the log file ${d.file}: ${d.reason}. Someone who can write to ${d.dir} could send the apps' output, and any secret they print, elsewhere this way. ` +
  `Remove it (\`${d.windows ? `del "${d.file}"` : `rm ${d.file}`}\`; httpsys creates the file again) and let only the account that runs httpsys write to the folder` +
  `${d.windows ? '.' : ` (\`chmod 750 ${d.dir}\`).`}`)
define('ERR_HTTPSYS_SCRIPT_NOT_FOUND', (d) =>
  `The app script ${d.script} does not exist${d.app ? ` (app ${str(d.app)})` : ''}. ` +
  (d.fix || 'Check the path: in a config file it is relative to the app\'s cwd (the config file\'s folder by default), on the command line to the current directory.'))
define('ERR_HTTPSYS_ALREADY_RUNNING', (d) =>
  `httpsys is already running ${d.config ? str(d.config) : 'these apps'} (supervisor pid ${d.pid}). ` +
  'Use `httpsys reload all` to pick up new code, or `httpsys stop all` before starting it again.')
define('ERR_HTTPSYS_NOT_RUNNING', (d) =>
  `No running httpsys supervisor${d.config ? ` for ${d.config}` : ''} was found${d.dir ? ` in ${d.dir}` : ''}. ` +
  (d.known && d.known.length
    ? `Running: ${d.known.join(', ')}; choose one with -c <config file or script> or --id <id>, or act on all with --all-supervisors.`
    : 'Start one with `httpsys start` (in another terminal, or as a service).'))
define('ERR_HTTPSYS_SUPERVISOR_AMBIGUOUS', (d) =>
  `${d.count} httpsys supervisors belong to this folder (${d.dir}): ${d.choices.join('; ')}. ` +
  'Name one with -c, as listed, or act on every one with --all-supervisors.')
define('ERR_HTTPSYS_APP_NOT_FOUND', (d) =>
  `No app named ${str(d.app)} is running${d.known && d.known.length ? ` (running: ${d.known.join(', ')})` : ''}. ` +
  'Use an app name from `httpsys ls`, or all.')
define('ERR_HTTPSYS_RELOAD_FAILED', (d) =>
  `Reloading ${str(d.app)} failed: ${d.reason}. The instances that were serving still serve; ` +
  `see \`httpsys logs ${d.app}\` for why the new process did not become ready.`)
define('ERR_HTTPSYS_TLS_RELOAD_FAILED', (d) =>
  `The certificate file ${d.file} did not load again: ${d.reason}. The certificate loaded before keeps serving; ` +
  'fix the file (`openssl x509 -in <cert> -noout -subject -dates` shows what a certificate says) and run `httpsys reload` again.')
define('ERR_HTTPSYS_CONTROL_DENIED', (d) =>
  `Cannot use the httpsys control channel at ${d.path}: ${d.reason}. ` +
  (d.fix ? `${d.fix}.` : 'Run the command as the user who started the supervisor, or set HTTPSYS_RUNTIME_DIR to a directory of your own.'))

// ---------------------------------------------------------------------------
// Running as a service: systemd, launchd, the Windows service control manager (src/service)

define('ERR_HTTPSYS_SERVICE_EXISTS', (d) =>
  `A ${d.kind || 'service'} named ${str(d.name)} already exists${d.path ? ` (${d.path})` : ''}. ` +
  (d.ours
    ? `Remove it first with \`httpsys service uninstall --name ${d.name}\`, or choose another name with --name.`
    : 'httpsys did not write it: choose another name with --name (or remove it by hand if it is stale).'))
define('ERR_HTTPSYS_SERVICE_DENIED', (d) =>
  `Cannot ${d.action || 'write'} ${d.path}: ${d.reason || 'permission denied'}. ` +
  (d.fix || (d.command ? `Run it as root: \`${d.command}\`.` : 'Run it as root (sudo), or install a user service (without --system).')))
define('ERR_HTTPSYS_SERVICE_CALL', (d) =>
  `The service control manager refused ${d.syscall}${d.name ? ` for the service ${str(d.name)}` : ''}: ${d.win32Name || 'Win32 error'} (${d.win32})${d.reason ? `, ${d.reason}` : ''}. ` +
  `\`httpsys service status${d.name ? ` --name ${d.name}` : ''}\` and \`sc.exe qc ${d.name || '<name>'}\` show what it has; the Windows event log (System, source Service Control Manager) says more.`)
define('ERR_HTTPSYS_SERVICE_NOT_SCM', () =>
  '`httpsys service run` is what the Windows service control manager starts, and this process was not started by it (ERROR_FAILED_SERVICE_CONTROLLER_CONNECT, 1063). ' +
  'Start the service with `sc.exe start <name>` (see `httpsys service status`), or run the apps in this terminal with `httpsys start -c <config>`.')
define('ERR_HTTPSYS_SERVICE_UNSUPPORTED', (d) =>
  `httpsys cannot install a service on ${d.platform}: it writes systemd units (Linux), launchd jobs (macOS) and Windows services. ` +
  'Start it from your init system with `httpsys start -c <config>` in the foreground: it stops gracefully on SIGTERM.')

/**
 * The error a router's answer carries ({ code, message, details }): the coded error
 * again where its code is one of ours and it has details, else a plain one with the code.
 */
function fromAnswer ({ code, message, details }) {
  const Coded = codes[code]
  if (Coded !== undefined && details !== undefined) return new Coded(details)
  const err = new Error(message)
  err.code = code
  return err
}

module.exports = { codes, fromAnswer }
