# Included by ctest after the discovered tests (test/CMakeLists.txt adds it to TEST_INCLUDE_FILES): the test
# cases that kill, restart and freeze the servers of a three-server ensemble ("integration.fault: ...", and
# "native.fault: ..." over the native transport) never run at the same time as each other. Two such ensembles restarting at once on two cores (six JVMs, a frozen process)
# slowed a re-election past the fixture's bound; one at a time, each still runs beside the lighter tests.
foreach(_zkr_test IN LISTS zkr_integration_tests_TESTS zkr_integration_tests_native_TESTS)
  if(_zkr_test MATCHES "^(integration|native)\\.fault: ")
    # COST: started early (ctest runs the costliest first), so that their chain does not end the run.
    set_tests_properties("${_zkr_test}" PROPERTIES RESOURCE_LOCK zkr_ensemble_faults COST 50)
  endif()
endforeach()
