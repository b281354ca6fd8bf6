# Runs ferrite_alloc_bench on one size with a tiny min time (libbenchmark 1.7.1 takes
# --benchmark_min_time as plain seconds) and checks that it exits 0 and prints the ratio table.
execute_process(COMMAND ${BENCH} --benchmark_filter=/64/ --benchmark_min_time=0.01
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ferrite_alloc_bench exited with ${rc}: ${err}")
endif()
foreach(expected "Allocator ratio table" "buddy/pmdk" "buddy/volatile" "64 B")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "ferrite_alloc_bench printed no '${expected}'")
  endif()
endforeach()
