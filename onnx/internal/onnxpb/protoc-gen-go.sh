#!/bin/sh
# Runs protoc-gen-go at the version go.mod pins for google.golang.org/protobuf.
exec go run google.golang.org/protobuf/cmd/protoc-gen-go "$@"
