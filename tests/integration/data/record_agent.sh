#!/bin/sh
# Recording wrapper for the reliability tests: appends this invocation's item id (one line,
# an atomic O_APPEND write) to $RECORD_FILE, then execs the real agent given as arguments,
# e.g.  sh record_agent.sh python examples/agent/agent.py
printf '%s\n' "${NEENS_DATASET_ITEM_ID:-?}" >> "${RECORD_FILE:?RECORD_FILE is not set}"
exec "$@"
