// Package csrapprover approves the kubelet serving-certificate requests of Nodes that joined as
// Machines, and only when every name and address in the request belongs to that Machine: the
// Node must be the one the controller linked to the Machine (nodelink: its UID, and the
// provider ID of the Machine's server), and the addresses are those the cloud reported for that
// server, as the controller recorded them. status.nodeRef and status.addresses are never
// trusted: whoever may write machines/status could otherwise get a certificate for any address.
// It denies nothing: a request it cannot vouch for is left pending for a human or another
// approver. It never talks to a cloud.
package csrapprover
