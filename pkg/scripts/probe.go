package scripts

// Probe returns the read-only script that reports a host's facts as key=value lines, one per
// fact, for ParseProbe. It needs no root; etcd_data needs root or passwordless sudo and is
// false without them (privileged=false then says so). It is the same for every family: it
// runs before the family is known.
func Probe() string {
	s, err := render("probe", "report host facts as key=value lines", anyFamily, nil)
	if err != nil {
		// The probe has no parameters: a failure is a broken template, caught by the tests.
		panic(err)
	}
	return s
}
