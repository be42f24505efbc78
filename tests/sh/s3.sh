# s3.sh: moto (moto_server, the reference S3 of the python3 on PATH, with
# boto3) for the tests of S3 origins (tests/remote/t_s3.sh,
# tests/upstream/t_s3.sh). Source it after common.sh. Sets S3PY (that
# python3) and FILL (s3fill.py, which fills a store with boto3); exports
# test keys and us-east-1, and unsets the other AWS_* variables a test
# inherits. A machine without moto or boto3 fails the test: .ci/deps cannot
# install them (no PyPI), FIELD-NOTES says where they come from.
S3PY=$(command -v python3)
command -v moto_server >/dev/null 2>&1 && "$S3PY" -c 'import boto3' 2>/dev/null || {
    bad "moto_server and boto3 on PATH" "the python3 on PATH has neither (FIELD-NOTES)"
    finish
}
FILL="$S3PY $SH_DIR/s3fill.py"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_DEFAULT_REGION AWS_ENDPOINT_URL

# start_moto VAR [ENV=VALUE...]: moto_server on a free loopback port (three
# tries: the port may be taken between choosing and binding); VAR gets it.
# Its readiness is asked of /moto-api/, which is no S3 action: moto's auth
# mode counts actions.
MOTO_PIDS=()
start_moto() {
    local var=$1 port pid i try
    shift
    for try in 1 2 3; do
        port=$(free_port)
        env "$@" moto_server -H 127.0.0.1 -p "$port" >"$T/moto-$port.log" 2>&1 &
        pid=$!
        for i in $(seq 1 100); do
            curl -sf -o /dev/null "http://127.0.0.1:$port/moto-api/data.json" && break
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if curl -sf -o /dev/null "http://127.0.0.1:$port/moto-api/data.json"; then
            MOTO_PIDS+=("$pid")
            printf -v "$var" %s "$port"
            return 0
        fi
        kill "$pid" 2>/dev/null
    done
    bad "moto_server starts" "$(tail -3 "$T/moto-$port.log")"
    return 1
}
stop_motos() { local p; for p in "${MOTO_PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
at_exit stop_motos

