// Package csrapprover approves the kubelet serving-certificate requests of Nodes that joined as
// Machines, and only when every name and address in the request belongs to that Machine (its
// status.addresses): a kubelet must never obtain a certificate for someone else's address. It
// denies nothing: a request it cannot vouch for is left pending for a human or another
// approver. It never talks to a cloud.
package csrapprover
