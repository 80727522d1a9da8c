'use strict'

// hello.js as a fastify app (the matrix's framework scenarios). Its host is given because
// fastify's default, 'localhost', may listen on ::1 alone where wrk asks 127.0.0.1.
const fastify = require('fastify')

const app = fastify({ logger: false })
app.get('/', async (req, reply) => {
  reply.type('text/plain')
  return 'hello world\n'
})
app.listen({ port: Number(process.env.PORT) || 8080, host: '127.0.0.1' }).catch((err) => {
  console.error(err)
  process.exit(1)
})
