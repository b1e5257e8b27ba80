// Inputs of test/Install/install.test: reads a .npy with the installed
// runtime and prints what it holds.
#include "gs/Runtime/Tensor.h"

#include <iostream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: describe-npy FILE.npy\n";
    return 2;
  }
  mlir::gs::runtime::Tensor tensor;
  if (std::string error = mlir::gs::runtime::readNpy(argv[1], tensor);
      !error.empty()) {
    std::cerr << "error: " << error << "\n";
    return 1;
  }
  std::cout << argv[1] << ": " << tensor.describe() << "\n";
  return 0;
}
