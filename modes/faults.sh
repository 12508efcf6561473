# help: rfp-faults: remaps failed at every allocation (CONFIG=debug)
# make faults: rfp-faults on the debug kernel, which has fault injection.
guest faults "$KERNEL" debug
test_cmd faults "rfp-ktap faults /dev/shm"
