package hub

import (
	"httpsys/router/internal/control"
)

// The control channel's commands (docs/router-control.md), as the supervisor sends
// them (src/supervisor/native-router.js).

type startCmd struct {
	control.Command
	WorkerSocket     string  `json:"workerSocket"`
	WorkersMayCreate bool    `json:"workersMayCreate"`
	Limits           *Limits `json:"limits"`
}

type createQueueCmd struct {
	control.Command
	Name string `json:"name"`
	QueueOptions
}

type nameCmd struct {
	control.Command
	Name string `json:"name"`
}

type availableCmd struct {
	control.Command
	Name      string `json:"name"`
	Available bool   `json:"available"`
}

// Register adds the router's commands to ch. done is called once close has finished
// (the process then exits).
func (h *Hub) Register(ch *control.Channel, done func()) {
	ch.Handle("start", func(line []byte) (any, error) {
		a := startCmd{Limits: ptr(DefaultLimits())}
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		if err := h.Start(StartOptions{WorkerSocket: a.WorkerSocket, WorkersMayCreate: a.WorkersMayCreate, Limits: *a.Limits}); err != nil {
			return nil, err
		}
		return map[string]any{"pid": pid()}, nil
	})
	ch.Handle("createQueue", func(line []byte) (any, error) {
		var a createQueueCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.CreateQueue(a.Name, a.QueueOptions)
	})
	ch.Handle("deleteQueue", func(line []byte) (any, error) {
		var a nameCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.DeleteQueue(a.Name)
	})
	ch.Handle("unbindQueue", func(line []byte) (any, error) {
		var a nameCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.UnbindQueue(a.Name)
	})
	ch.Handle("setQueueAvailable", func(line []byte) (any, error) {
		var a availableCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.SetQueueAvailable(a.Name, a.Available)
	})
	ch.Handle("queueStats", func(line []byte) (any, error) {
		var a nameCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.QueueStats(a.Name)
	})
	ch.Handle("stats", func(line []byte) (any, error) {
		var a control.Command
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.Stats(), nil
	})
	h.registerTLS(ch)
	h.registerURLCommands(ch)
	h.registerProcess(ch)
	h.registerBind(ch)
	ch.Handle("close", func(line []byte) (any, error) {
		var a control.Command
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		h.Close()
		return control.Then{After: done}, nil
	})
}

func ptr[T any](v T) *T { return &v }
