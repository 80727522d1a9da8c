'use strict'

// hello.js as an express app (the matrix's framework scenarios).
const express = require('express')

const app = express()
app.get('/', (req, res) => {
  res.type('text/plain').send('hello world\n')
})
app.listen(Number(process.env.PORT) || 8080)
