module httpsys/router

go 1.24
