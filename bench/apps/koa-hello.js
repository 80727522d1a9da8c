'use strict'

// hello.js as a koa app (the matrix's framework scenarios).
const Koa = require('koa')

const app = new Koa()
app.use((ctx) => {
  ctx.type = 'text/plain'
  ctx.body = 'hello world\n'
})
app.listen(Number(process.env.PORT) || 8080)
