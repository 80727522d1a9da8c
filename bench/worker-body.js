'use strict'

// The worker's own CPU per large body, without the rest of the tree: a standalone app
// (`node --require src/register.js`, its router a child process of its own) answers 1 MB
// responses or reads 1 MB uploads, a client here sends them, and the app reports its
// process.cpuUsage() and page faults over the counted requests (its router excluded).
// bench/results/router-profile.md, "The worker's side of large bodies".
//
//   node bench/worker-body.js [up|res] [requests=2000] [connections=2] [--tree DIR] [--node]
//
// --tree runs another checkout's src (an A/B of the worker alone; HTTPSYS_ROUTER_PATH
// keeps the router the same), --node bare node (its figure is its whole job).

const http = require('node:http')
const path = require('node:path')
const { spawn } = require('node:child_process')

const APP = `
const http = require('node:http')
const body = Buffer.alloc(1048576, 'x')
let last = process.cpuUsage()
let faults = 0
let n = 0
const minflt = () => Number(require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7])
http.createServer((req, res) => {
  if (req.url === '/mark') {
    const u = process.cpuUsage(last)
    last = process.cpuUsage()
    const f = process.platform === 'linux' ? minflt() : 0
    res.end(JSON.stringify({ user: u.user, system: u.system, n, faults: f - faults }))
    faults = f
    n = 0
    return
  }
  n++
  if (req.method === 'POST') {
    let bytes = 0
    req.on('data', (c) => { bytes += c.length })
    req.on('end', () => res.end(String(bytes)))
    return
  }
  res.writeHead(200, { 'Content-Length': body.length })
  res.end(body)
}).listen(Number(process.env.PORT), () => process.send('ready'))
`

function get (port, p) {
  return new Promise((resolve, reject) => {
    http.get({ port, path: p, agent: false }, (res) => {
      let s = ''
      res.on('data', (d) => { s += d })
      res.on('end', () => resolve(s))
    }).on('error', reject)
  })
}

function drive (port, mode, n, connections) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const up = Buffer.alloc(1048576, 'y')
  let started = 0
  let done = 0
  return new Promise((resolve, reject) => {
    const one = () => {
      if (started >= n) return
      started++
      const req = http.request({ port, agent, method: mode === 'up' ? 'POST' : 'GET', path: '/', headers: mode === 'up' ? { 'Content-Length': up.length } : {} }, (res) => {
        res.resume()
        res.on('end', () => {
          if (++done === n) {
            agent.destroy()
            resolve()
          } else {
            one()
          }
        })
      })
      req.on('error', reject)
      req.end(mode === 'up' ? up : undefined)
    }
    for (let i = 0; i < connections; i++) one()
  })
}

async function main () {
  const args = process.argv.slice(2)
  const flag = (name) => {
    const i = args.indexOf(name)
    if (i === -1) return null
    args.splice(i, 1)
    return name === '--node' ? true : args.splice(i, 1)[0]
  }
  const tree = path.resolve(flag('--tree') || path.join(__dirname, '..'))
  const bare = flag('--node') === true
  const [mode = 'up', n = '2000', connections = '2'] = args
  const port = 20000 + Math.floor(Math.random() * 20000)
  const nodeArgs = bare ? ['-e', APP] : ['--require', path.join(tree, 'src', 'register.js'), '-e', APP]
  const app = spawn(process.execPath, nodeArgs, { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  try {
    await new Promise((resolve, reject) => {
      app.once('message', resolve)
      app.once('exit', (code) => reject(new Error(`the app exited ${code}`)))
    })
    await drive(port, mode, Math.max(1, Math.floor(Number(n) / 5)), Number(connections)) // warm-up
    await get(port, '/mark')
    await drive(port, mode, Number(n), Number(connections))
    const r = JSON.parse(await get(port, '/mark'))
    const per = (v) => (v / r.n).toFixed(1)
    console.log(`${bare ? 'bare node' : tree} ${mode} x${r.n}: worker us per request ${per(r.user + r.system)} (user ${per(r.user)}, system ${per(r.system)}), page faults ${per(r.faults)}`)
  } finally {
    app.kill()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
