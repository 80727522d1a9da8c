'use strict'

// httpsys.config.js: the apps `httpsys start` runs. Check it with `httpsys config check`.
// Every key below is optional except script; the values shown are the defaults unless
// the comment says otherwise. Durations: ms or "500ms", "10s", "2m". Sizes: "300M", "1G".

module.exports = {
  apps: [
    {
      name: 'web', // in logs, `httpsys ls`, and the queue name (default: the script's name)
      script: 'app.js', // relative to cwd; an npm bin (node_modules/.bin/x) works too
      // cwd: '.', // where the app runs; relative paths start at this file
      urls: ['http://+:8080/'], // URL prefixes routed to the app; none: its listen() decides
      instances: 1, // processes sharing the app's queue; 'max' for one per CPU
      // args: [], // process.argv.slice(2) of the app
      // node_args: ['--max-old-space-size=512'],
      env: { NODE_ENV: 'development' },
      env_production: { NODE_ENV: 'production' }, // merged over env with `httpsys start --env production`

      // restarts
      restart: 'always', // or 'on-failure' (not after exit code 0), 'never'
      stop_exit_codes: [], // exit codes that mean "done": not restarted
      backoff: { initial: '200ms', max: '30s', factor: 2, jitter: 0.2, reset_after: '60s' },
      min_uptime: '5s', // an exit before ready, or this soon after it, is unstable
      max_restarts: 10, // unstable exits within restart_window that make it "errored" (0: never give up)
      restart_window: 'auto', // max_restarts x (backoff.max + ready_timeout + kill_timeout + min_uptime)

      // readiness and stopping
      wait_ready: false, // true: ready when the app calls process.send('ready'), not at its first listen()
      ready_timeout: '30s', // not ready by then: a failed start (a reload keeps the old process)
      listen_timeout: '30s', // no listen() by then: stopped by httpsys, a failed start
      kill_timeout: '10s', // drain + the app's own shutdown may take this long, then its process tree is killed
      max_memory_restart: 0, // e.g. '300M': reload an instance whose memory stays above it

      // watch mode (development): reload on file changes; node_modules, dotfiles and log_dir are never watched
      watch: false, // true: the app's cwd; or ['src', 'config']
      ignore_watch: [], // e.g. ['uploads', '**/*.tmp']
      watch_delay: '300ms', // a burst of changes within this is one reload

      // log files, written and rotated by httpsys (NDJSON, one record per line)
      log_dir: null, // e.g. './logs': writes <name>.log there
      log_max_size: '10M',
      log_daily: false,
      log_keep: 5
    }
  ]
}
