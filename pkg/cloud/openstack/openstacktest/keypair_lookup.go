package openstacktest

// keypairPublicKey is the public key of a keypair, "" when there is none.
// TEMPORARY until the keypair API lands (issue16-api branch): replaced at merge.
func (s *Sim) keypairPublicKey(name string) string { return s.st.testKeys[name] }
