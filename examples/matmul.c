/* Placeholder: being written. */
#include <gpukit/gpukit.h>

int main(void)
{
    return 0;
}
