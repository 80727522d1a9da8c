package conn

import "testing"

// A read that fills the connection's buffer (a body streaming in) makes the next reads
// use a large one; a read shorter than the small buffer gives the large one back, so a
// connection that sends little keeps only its small buffer.
func TestReadsGrowWhileTheyFillTheBufferAndShrinkAfter(t *testing.T) {
	s := &Server{}
	small := s.readBuffer()
	bp := s.nextBuffer(small, small, 100)
	if bp != small {
		t.Fatal("a short read took a large buffer")
	}
	bp = s.nextBuffer(small, small, readSize)
	if bp == small || len(*bp) != bigRead {
		t.Fatalf("a full read of %d bytes: next buffer %d bytes, want %d", readSize, len(*bp), bigRead)
	}
	big := bp
	if bp = s.nextBuffer(small, big, bigRead); bp != big {
		t.Fatal("a full large read gave the large buffer back")
	}
	if bp = s.nextBuffer(small, big, readSize); bp != big {
		t.Fatal("a read of readSize bytes into the large buffer gave it back")
	}
	if bp = s.nextBuffer(small, big, readSize-1); bp != small {
		t.Fatal("a short read kept the large buffer")
	}
}
