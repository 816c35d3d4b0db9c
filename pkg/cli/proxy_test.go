package cli

import "testing"

func TestRemoteListen(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:8080": false, "127.0.0.2:0": false, "[::1]:8080": false, "localhost:8080": false, "LocalHost:1": false,
		":8080": true, "0.0.0.0:8080": true, "[::]:8080": true, "10.0.0.5:8080": true, "proxy.example.com:8080": true, "localhost.example.com:1": true,
	} {
		got, err := remoteListen(listen)
		if err != nil || got != want {
			t.Errorf("%s: remote %t, %v; want %t", listen, got, err, want)
		}
	}
	if _, err := remoteListen("8080"); err == nil {
		t.Error("8080 without a host: no error")
	}
}
