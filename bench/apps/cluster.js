'use strict'

// node's cluster module serving APP with WORKERS processes: what pm2's cluster mode
// runs (a primary that forks the app, the workers sharing its listening socket), without
// pm2's daemon, so the matrix measures the cluster and not pm2's bookkeeping.
const cluster = require('node:cluster')

cluster.setupPrimary({ exec: process.env.APP })
const workers = Number(process.env.WORKERS) || 2
for (let i = 0; i < workers; i++) cluster.fork()
cluster.on('exit', (worker, code, signal) => {
  // a worker that dies mid-run would skew the figures silently; say so
  if (signal !== 'SIGTERM' && signal !== 'SIGINT') console.error(`cluster: worker ${worker.process.pid} exited (${signal || code})`)
})
