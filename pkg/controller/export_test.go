package controller

// NewMetricsFilter is the metrics server's filter with a clock the test moves.
var NewMetricsFilter = newMetricsFilter
