package openstack

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestDecodeBudget: bodies being decoded hold their estimated cost until closed or read to the
// end; a request that does not fit waits, and gives up with its context.
func TestDecodeBudget(t *testing.T) {
	b := newBudget(100)
	ctx := context.Background()
	first, err := b.hold(ctx, 70)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.hold(short, 40); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a cost beyond what is left must wait, got %v", err)
	}
	first()
	first() // a second release gives nothing back twice
	all, err := b.hold(ctx, 1000)
	if err != nil {
		t.Fatalf("a cost above the total must take all of it: %v", err)
	}
	body := &heldBody{r: bytesReader("{}"), release: all}
	buf := make([]byte, 8)
	for {
		if _, err := body.Read(buf); err != nil {
			break
		}
	}
	again, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	if _, err := b.hold(again, 100); err != nil {
		t.Fatalf("a body read to its end must give its share back: %v", err)
	}
}

func bytesReader(s string) *bytes.Reader { return bytes.NewReader([]byte(s)) }
