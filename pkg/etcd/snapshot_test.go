package etcd

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"
	"testing/iotest"
)

func TestVerifySnapshot(t *testing.T) {
	data := bytes.Repeat([]byte("etcd backend page "), 5000)
	sum := sha256.Sum256(data)
	good := append(append([]byte{}, data...), sum[:]...)
	// Written in small pieces, as a gRPC stream delivers it.
	if err := VerifySnapshot(iotest.OneByteReader(bytes.NewReader(good))); err != nil {
		t.Fatalf("a good snapshot: %v", err)
	}
	bad := append([]byte{}, good...)
	bad[100] ^= 1
	if err := VerifySnapshot(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a corrupt snapshot: %v", err)
	}
	if err := VerifySnapshot(bytes.NewReader(good[:len(good)-1])); err == nil {
		t.Error("a truncated snapshot passed")
	}
	if err := VerifySnapshot(bytes.NewReader([]byte("short"))); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("a short snapshot: %v", err)
	}
}
