package logger

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestRecordsArePinosNDJSON(t *testing.T) {
	var b bytes.Buffer
	log := New(&b, "debug")
	log.Warn("careful", "port", 80)
	log.Debug("detail")
	New(&b, "warn").Info("not written")
	var recs []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2: %s", len(recs), b.String())
	}
	if recs[0]["level"] != float64(Warn) || recs[0]["msg"] != "careful" || recs[0]["port"] != float64(80) {
		t.Fatalf("record %v", recs[0])
	}
	if _, ok := recs[0]["time"].(float64); !ok || recs[0]["pid"] == nil || recs[0]["hostname"] == nil {
		t.Fatalf("record %v lacks pino's time, pid or hostname", recs[0])
	}
	if recs[1]["level"] != float64(Debug) {
		t.Fatalf("debug record level %v", recs[1]["level"])
	}
}
