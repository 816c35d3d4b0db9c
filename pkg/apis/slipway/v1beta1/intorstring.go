package v1beta1

import "k8s.io/apimachinery/pkg/util/intstr"

// IntOrString is a number (2) or a percentage ("25%").
type IntOrString = intstr.IntOrString
