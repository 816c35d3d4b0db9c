package main

import "go.uber.org/zap/zapcore"

// zapErrorsOnly keeps the benchmark's output to its figures.
const zapErrorsOnly = zapcore.ErrorLevel
