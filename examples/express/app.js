'use strict'

// A realistic express app, unchanged for httpsys: a JSON API, a form with cookies, static
// files (with Range and caching headers), a streamed download, a 404 handler and error
// middleware.
//
// It uses express and cookie-parser from the repository root: run `npm install` at the
// root first. Then:
//   node examples/express/app.js                   plain node, port 3000
//   npx httpsys start examples/express/app.js -i 2 the same app, two processes, one queue

const path = require('node:path')
const express = require('express')
const cookieParser = require('cookie-parser')

const COOKIE_SECRET = process.env.COOKIE_SECRET || 'httpsys-example-secret'
const MAX_DOWNLOAD = 1024 * 1024 * 1024

const app = express()

app.use(express.json({ limit: '100kb' }))
app.use(express.urlencoded({ extended: false, limit: '100kb' }))
app.use(cookieParser(COOKIE_SECRET))
// Range, ETag and Last-Modified come with express.static (public/data/big.txt is > 100 KB)
app.use(express.static(path.join(__dirname, 'public'), { maxAge: '1h' }))

app.use('/api/notes', notesRouter())

// the form on index.html posts here (application/x-www-form-urlencoded)
app.post('/login', (req, res) => {
  const name = typeof req.body.name === 'string' ? req.body.name.trim() : ''
  if (!name || name.length > 64) {
    res.status(400).send('A name of 1-64 characters, please.\n')
    return
  }
  res.cookie('user', name, { signed: true, httpOnly: true, sameSite: 'lax' })
  res.redirect(303, '/')
})

app.post('/logout', (req, res) => {
  res.clearCookie('user')
  res.redirect(303, '/')
})

app.get('/whoami', (req, res) => {
  const visits = (Number(req.cookies.visits) || 0) + 1
  res.cookie('visits', String(visits))
  res.json({ user: req.signedCookies.user || null, visits, pid: process.pid, instance: process.env.HTTPSYS_INSTANCE ?? null })
})

// /download?size=10485760: a generated file, written chunk by chunk and honouring
// backpressure, so memory stays flat for any size and any client speed. No
// content-length: the body goes out chunked.
app.get('/download', async (req, res, next) => {
  const size = req.query.size === undefined ? 10 * 1024 * 1024 : Number(req.query.size)
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_DOWNLOAD) {
    res.status(400).json({ error: `size must be an integer from 0 to ${MAX_DOWNLOAD}` })
    return
  }
  res.set({ 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="stream.bin"' })
  const chunk = Buffer.alloc(64 * 1024, 'httpsys streams ')
  try {
    for (let sent = 0; sent < size && !res.destroyed; sent += chunk.length) {
      const piece = size - sent < chunk.length ? chunk.subarray(0, size - sent) : chunk
      if (!res.write(piece)) await drained(res)
    }
    if (!res.destroyed) res.end()
  } catch (err) {
    next(err)
  }
})

// for trying the error middleware
app.get('/boom', () => {
  throw new Error('boom (on purpose)')
})

app.use((req, res) => {
  res.status(404).json({ error: 'not found', path: req.path })
})

// four arguments: express's signature for error middleware
app.use((err, req, res, next) => {
  const status = err.status || err.statusCode || 500
  if (status >= 500) console.error(`${req.method} ${req.originalUrl} failed:`, err)
  if (res.headersSent) {
    next(err)
    return
  }
  res.status(status).json({ error: status >= 500 && !err.expose ? 'internal server error' : err.message })
})

function notesRouter () {
  const router = express.Router()
  const notes = new Map()
  let nextId = 1

  router.get('/', (req, res) => {
    res.json([...notes.values()])
  })

  router.post('/', (req, res) => {
    const text = req.body && req.body.text
    if (typeof text !== 'string' || text.length === 0) {
      res.status(400).json({ error: 'send JSON like {"text": "buy milk"}' })
      return
    }
    const note = { id: nextId++, text, createdBy: process.pid }
    notes.set(note.id, note)
    res.status(201).location(`/api/notes/${note.id}`).json(note)
  })

  router.get('/:id', (req, res) => {
    const note = notes.get(Number(req.params.id))
    if (!note) {
      res.status(404).json({ error: `no note ${req.params.id} (notes live in one process: with several instances, each has its own)` })
      return
    }
    res.json(note)
  })

  router.delete('/:id', (req, res) => {
    res.status(notes.delete(Number(req.params.id)) ? 204 : 404).end()
  })

  return router
}

function drained (res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

if (require.main === module) {
  const port = Number(process.env.PORT) || 3000
  app.listen(port, () => {
    console.log(`express example listening on http://localhost:${port}/ (pid ${process.pid})`)
  })
}

module.exports = app
