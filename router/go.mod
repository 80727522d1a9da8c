module httpsys/router

go 1.24.0

require (
	github.com/Microsoft/go-winio v0.6.2
	golang.org/x/net v0.47.0
	golang.org/x/sys v0.38.0
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

require (
	golang.org/x/crypto v0.44.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)
